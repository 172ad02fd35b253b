"""The deploy contract, kept by every target: refusals are data the base class enforces while
reading config (with the reason and a valid value to use instead), and rendering is a port."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigReader, merged_stack_config, read_stack_config
from infra.targets import load_target, registry, stacks
from infra.targets.base import Refusal, render_port
from infra.targets.capabilities import DEPLOY
from tdk.errors import ConfigError, UsageError
from tests.registry_lists import deployable_targets, dev_stack, kubernetes_targets

ROOT = Path(__file__).resolve().parents[2]
STACKS = {name: dev_stack(name) for name in deployable_targets()}


def test_every_deployable_target_ships_its_dev_stack() -> None:
    assert STACKS and all((ROOT / f"Pulumi.{stack}.yaml").is_file() for stack in STACKS.values())


def _read(name: str, overrides: dict[str, Any]) -> Any:
    target = load_target(name)
    reader = ConfigReader(merged_stack_config(ROOT, STACKS[name], overrides).get)
    return target.read_config(reader, read_stack_config(reader, name, target.release_schemes))


def _example(refusal: Refusal) -> str:
    """A concrete value the refusal's glob matches (``inf2.*`` -> ``inf2.2xlarge``)."""
    value = refusal.value.replace("*", "2xlarge")
    assert refusal.matches(value)
    return value


def _all_refusals() -> list[tuple[str, Refusal]]:
    return [(name, r) for name in registry.able(DEPLOY) for r in load_target(name).refusals()]


@pytest.mark.parametrize(("target_name", "refusal"), _all_refusals(), ids=lambda v: str(v))
def test_every_refusal_is_enforced_with_its_reason_and_a_valid_value(
    target_name: str, refusal: Refusal
) -> None:
    with pytest.raises(ConfigError) as caught:
        _read(target_name, {refusal.key: _example(refusal)})
    assert refusal.reason in caught.value.message
    assert f"triton-deploy-kit:{refusal.key}" in caught.value.message
    assert refusal.instead in caught.value.hint
    # the value the hint offers is itself accepted
    _read(target_name, {refusal.key: refusal.instead})


def test_eks_refuses_inferentia_without_suggesting_a_glob() -> None:
    with pytest.raises(ConfigError) as caught:
        _read("eks", {"eksGpuInstanceType": "inf2.xlarge"})
    assert "Inferentia2" in caught.value.message
    assert "g5.xlarge" in caught.value.hint and "*" not in caught.value.hint


@pytest.mark.parametrize("name", kubernetes_targets())
def test_kubernetes_targets_render_the_workload(name: str) -> None:
    target = load_target(name)
    manifests = target.render.manifests(_read(name, {}), lambda output: "${" + output + "}")
    kinds = [m["kind"] for m in manifests]
    assert kinds[:3] == ["Namespace", "ServiceAccount", "Deployment"]
    assert "ScaledObject" in kinds


def test_sagemaker_refuses_to_render_and_says_why() -> None:
    target = load_target("sagemaker")
    with pytest.raises(UsageError) as caught:
        render_port(target, "sagemaker")
    assert "SageMaker runs the Triton container itself" in caught.value.message


@pytest.mark.parametrize("stack", [dev_stack(n) for n in kubernetes_targets()])
def test_k8s_invoke_command_is_complete_and_the_cli_accepts_it(stack: str) -> None:
    """The stack output is pasteable: port-forward, wait for ready, then a `tdk invoke` whose
    every option exists, naming a real TargetModel of the sample release."""
    import shlex

    from typer.testing import CliRunner

    from cli.main import app
    from tests.infra.pulumi_harness import run_stack

    outputs = run_stack(stack).outputs
    command = outputs["invokeCommand"]
    forward, rest = command.split(" >/dev/null & ", 1)
    assert forward == outputs["portForward"]
    assert shlex.split(forward)[:2] == ["kubectl", "-n"]
    ready, invoke = rest.split("; done; ", 1)
    assert "/v2/health/ready" in ready
    argv = shlex.split(invoke)
    assert argv[:2] == ["tdk", "invoke"]
    # the stack's own target, never a deprecated spelling (it said `--target k8s`)
    assert argv[argv.index("--target") + 1] == stacks.load_stack(ROOT, stack).entry.name
    assert argv[argv.index("--target-model") + 1] == "text_pipeline-0.tar.gz"
    assert argv[argv.index("--release") + 1].endswith("releases/v1")
    result = CliRunner().invoke(app, [*argv[1:], "--release", "file:///nonexistent-release"])
    assert "No such option" not in result.output and "Invalid value" not in result.output
