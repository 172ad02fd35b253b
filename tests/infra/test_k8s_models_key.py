"""``k8sModels``: ``pulumi up`` (the real program under mocks) fits the workload to the
release's models exactly as ``tdk render k8s --models`` does, with no k8sTritonImage set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from tests.infra.pulumi_harness import ROOT, run_stack
from tests.validate.llm import corpus as c

PREFIX = "triton-deploy-kit"
#: a two-GPU vLLM model on two-GPU nodes (nothing about the image is set by hand)
KEYS: dict[str, dict[str, Any]] = {
    "gke-dev": {"k8sGpusPerPod": 2, "gkeMachineType": "g2-standard-24", "gkeGpusPerNode": 2},
    "eks-dev": {"k8sGpusPerPod": 2, "eksGpuInstanceType": "g6e.12xlarge"},
}
SCALED = "kubernetes:keda.sh/v1alpha1:ScaledObject"
runner = CliRunner()


def _repo(tmp_path: Path) -> Path:
    return c.vllm_repo(tmp_path / "repo", args=dict(c.VLLM_ARGS, tensor_parallel_size=2))


def _render(tmp_path: Path, stack: str, keys: dict[str, Any], *extra: str) -> dict[str, Any]:
    """kind -> the object ``tdk render k8s`` writes for a project whose stack sets ``keys``."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    data = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    data["config"].update({f"{PREFIX}:{k}": v for k, v in keys.items()})
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(data))
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    args = ["render", "k8s", "--stack", stack, "--out", str(out), "--project-dir", str(project)]
    result = runner.invoke(app, [*args, *extra, "--json"])
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)["files"]
    return {f["kind"]: yaml.safe_load(Path(f["path"]).read_text()) for f in files}


def _same(declared: dict[str, Any], rendered: dict[str, Any]) -> None:
    assert json.loads(json.dumps(declared)) == json.loads(json.dumps(rendered), parse_int=float)


def _scaling(scaled: dict[str, Any]) -> dict[str, Any]:
    """The ScaledObject spec minus the Prometheus address (eks renders ${ampWorkspaceId} until
    the stack's outputs are passed with --outputs)."""
    spec: dict[str, Any] = json.loads(json.dumps(scaled))
    for trigger in spec["triggers"]:
        trigger["metadata"].pop("serverAddress", None)
    assert all("vllm:" in t["metadata"]["query"] for t in spec["triggers"])  # engine triggers
    return spec


@pytest.mark.parametrize("stack", ["gke-dev", "eks-dev"])
def test_pulumi_up_applies_the_workload_render_models_writes(tmp_path: Path, stack: str) -> None:
    repo = _repo(tmp_path)
    rendered = _render(tmp_path, stack, KEYS[stack], "--models", str(repo))
    run = run_stack(stack, KEYS[stack] | {"k8sModels": str(repo)})
    deployment = run.one("kubernetes:apps/v1:Deployment").inputs
    [triton] = deployment["spec"]["template"]["spec"]["containers"]
    assert triton["image"].endswith("-vllm-python-py3")  # fitted, not the configured image
    _same(deployment["spec"], rendered["Deployment"]["spec"])
    _same(_scaling(run.one(SCALED).inputs["spec"]), _scaling(rendered["ScaledObject"]["spec"]))
    # and the stack's own key is what render reads without --models
    keyed = _render(tmp_path, stack, KEYS[stack] | {"k8sModels": str(repo)})
    _same(deployment["spec"], keyed["Deployment"]["spec"])


def test_without_the_key_the_workload_is_as_configured() -> None:
    deployment = run_stack("gke-dev").one("kubernetes:apps/v1:Deployment").inputs
    [triton] = deployment["spec"]["template"]["spec"]["containers"]
    assert not triton["image"].endswith("-vllm-python-py3")


def test_a_pod_smaller_than_the_model_stops_pulumi_up(tmp_path: Path) -> None:
    run = run_stack("gke-dev", {"k8sModels": str(_repo(tmp_path))}, expect_error=True)
    assert "needs 2 GPUs per replica" in str(run.error)
    assert not run.of_type("kubernetes:apps/v1:Deployment")


def test_an_invalid_repository_stops_pulumi_up(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo", args="{")
    run = run_stack("gke-dev", KEYS["gke-dev"] | {"k8sModels": str(repo)}, expect_error=True)
    assert "TDK602" in str(run.error) and not run.resources


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("model_repos/llm", "relative path"),
        ("/nonexistent/models", "not a directory"),
    ],
)
def test_a_bad_key_names_the_key_and_the_fix(value: str, message: str) -> None:
    run = run_stack("eks-dev", {"k8sModels": value}, expect_error=True)
    text = str(run.error)
    assert f"{PREFIX}:k8sModels" in text and message in text
    assert "pulumi config set" in getattr(run.error, "hint", "")
