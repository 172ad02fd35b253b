"""validate, plan and doctor know ``k8sModelMode`` (issue 46 item 8), through the one
feasibility path: ``all`` is refused when the release does not fit a pod (TDK919, the fix
names ``mme``); ``mme`` refuses an ensemble whose steps are not in the release (TDK920), says
how many copies of each model a pod's budget holds, and serves decoupled models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.config import ConfigReader
from infra.targets import registry, stacks
from infra.targets.feasibility import feasible
from packager.publish import load_models
from tests.infra.pulumi_harness import ROOT, stack_config
from tests.registry_lists import dev_stack, kubernetes_targets
from tests.validate.helpers import PYTHON_MODEL, make_repo

MME = {"k8sModelMode": "mme", "k8sFrontImage": "registry.example.com/tdk-front:1"}
#: a CPU pod of 1 MiB: 90 % of it is the budget, so a few 4 KiB copies fill it
SMALL_POD = {"k8sWorkloadKind": "cpu", "k8sMemory": "1Mi"}
WEIGHTS = 4096


def _stack(name: str, overrides: dict[str, Any]) -> registry.StackSettings:
    return stacks.settings(ConfigReader(stack_config(name, overrides).get), name)


def _python(name: str, extra: str = "") -> tuple[str, dict[str, str]]:
    config = f'name: "{name}"\nbackend: "python"\nmax_batch_size: 0\n{extra}'
    return config, {"1/model.py": PYTHON_MODEL, "1/weights.bin": "x" * WEIGHTS}


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"small": _python("small")})


@pytest.mark.parametrize("target", kubernetes_targets())
def test_all_mode_refuses_a_release_larger_than_a_pod_and_names_mme(
    tmp_path: Path, target: str
) -> None:
    models = load_models([_repo(tmp_path)])
    stack = _stack(dev_stack(target), SMALL_POD)
    assert feasible(stack, models, copies=10).ok
    refused = feasible(stack, models, copies=1000).first_refusal()
    assert refused is not None and refused.code == "TDK919", refused
    assert "1000 copies" in refused.message and "k8sModelMode all" in refused.message
    assert "k8sModelMode mme" in refused.fix


@pytest.mark.parametrize("target", kubernetes_targets())
def test_mme_mode_serves_the_same_release_and_says_what_a_pod_holds(
    tmp_path: Path, target: str
) -> None:
    models = load_models([_repo(tmp_path)])
    verdict = feasible(_stack(dev_stack(target), {**SMALL_POD, **MME}), models, copies=1000)
    assert verdict.ok, verdict.findings
    (fit,) = verdict.fits
    held = int(0.9 * 2**20) // fit.weight_bytes  # the budget: 90 % of the 1 MiB pod
    assert fit.gpu_copies == held > 0
    (working_set,) = [f for f in verdict.findings if f.code == "TDK905"]
    assert f"1000 copies of 'small' are packaged but {held} fit" in working_set.message


def test_mme_refuses_an_ensemble_whose_steps_are_not_in_the_release(tmp_path: Path) -> None:
    ensemble = (
        'name: "pipeline"\nplatform: "ensemble"\nmax_batch_size: 0\n'
        'input [{ name: "IN" data_type: TYPE_FP32 dims: [1] }]\n'
        'output [{ name: "OUT" data_type: TYPE_FP32 dims: [1] }]\n'
        'ensemble_scheduling { step [{ model_name: "absent" model_version: -1 '
        'input_map { key: "x" value: "IN" } output_map { key: "y" value: "OUT" } }] }\n'
    )
    repo = make_repo(tmp_path / "repo", {"pipeline": (ensemble, {"1/.keep": ""})})
    models = load_models([repo])
    target = kubernetes_targets()[0]
    verdict = feasible(_stack(dev_stack(target), MME), models)
    (refused,) = [f for f in verdict.findings if f.code == "TDK920"]
    assert refused.severity == "error" and "absent" in refused.message
    all_mode = feasible(_stack(dev_stack(target), {}), models)
    assert "TDK920" not in {f.code for f in all_mode.findings}


@pytest.mark.parametrize("target", kubernetes_targets())
def test_mme_serves_decoupled_models(tmp_path: Path, target: str) -> None:
    policy = "model_transaction_policy { decoupled: true }\n"
    repo = make_repo(tmp_path / "repo", {"streamer": _python("streamer", policy)})
    verdict = feasible(_stack(dev_stack(target), MME), load_models([repo]))
    assert verdict.ok, verdict.findings


def test_validate_stack_refuses_all_mode_with_the_fix(tmp_path: Path) -> None:
    """``tdk validate --stack`` takes the same path: TDK919 and the ``mme`` fix in its JSON."""
    repo = _repo(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    stack = dev_stack(kubernetes_targets()[0])
    keys = "".join(f"  triton-deploy-kit:{k}: {v}\n" for k, v in SMALL_POD.items())
    (project / f"Pulumi.{stack}.yaml").write_text(
        (ROOT / f"Pulumi.{stack}.yaml").read_text() + keys
    )
    args = ["validate", str(repo), "--stack", stack, "--project-dir", str(project)]
    result = CliRunner().invoke(app, [*args, "--copies", "1000", "--json"])
    findings = json.loads(result.stdout)
    (refused,) = [f for f in findings if f["code"] == "TDK919"]
    assert result.exit_code == 1 and "k8sModelMode mme" in refused["fix"]
    mme = "".join(f"  triton-deploy-kit:{k}: {v}\n" for k, v in MME.items())
    (project / f"Pulumi.{stack}.yaml").write_text(
        (ROOT / f"Pulumi.{stack}.yaml").read_text() + keys + mme
    )
    again = CliRunner().invoke(app, [*args, "--copies", "1000", "--json"])
    assert "TDK919" not in {f["code"] for f in json.loads(again.stdout)}


def test_doctor_refuses_an_all_mode_stack_whose_models_do_not_fit_a_pod(tmp_path: Path) -> None:
    """``tdk doctor`` asks the same path of the models the stack names (``k8sModels``)."""
    from cli.doctor import _feasibility

    half = "x" * (600 * 1024)  # each fits the 0.9 MiB pod alone, the two together do not
    models = {}
    for name in ("left", "right"):
        config, files = _python(name)
        models[name] = (config, {**files, "1/weights.bin": half})
    repo = make_repo(tmp_path / "repo", models)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    stack = dev_stack(kubernetes_targets()[0])
    keys = {**SMALL_POD, "k8sModels": str(repo)}
    lines = "".join(f"  triton-deploy-kit:{k}: {v}\n" for k, v in keys.items())
    (project / f"Pulumi.{stack}.yaml").write_text(
        (ROOT / f"Pulumi.{stack}.yaml").read_text() + lines
    )
    verdict = _feasibility(project, stack)
    refusal = str(verdict["refusal"])
    assert not verdict["ok"] and "k8sModelMode all loads every model" in refusal, verdict
    assert "2 model(s) x 1 copy take 1.2 MiB loaded at once" in refusal
    assert "holds 0.9 MiB" in refusal
