"""``tdk render k8s --models``: a release of LLM models gets the image flavour with its engine,
the GPUs per replica, /dev/shm room, a startup budget for a minutes-long load, the HF token as
an optional secret reference and a persistent weight cache; the result passes strict schema
validation like every rendered stack."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.gcp import catalog as gcp_catalog
from infra.facts import llm
from infra.k8s.config import serve_models
from packager.requirements import Requirements
from tdk.errors import ConfigError
from tests.infra.test_crd_schemas import _schema
from tests.registry_lists import kubernetes_targets
from tests.validate.llm import corpus as c

ROOT = Path(__file__).resolve().parents[2]
K8S_VERSION = "1.33"  # as tests/cli/test_render.py
runner = CliRunner()
PREFIX = "triton-deploy-kit"


def _project(tmp_path: Path, stack: str, **keys: object) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    data = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    data["config"].update({f"{PREFIX}:{k}": v for k, v in keys.items()})
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(data))
    return project


def _render(project: Path, stack: str, repo: Path, out: Path) -> list[dict[str, Any]]:
    args = ["render", "k8s", "--stack", stack, "--out", str(out), "--project-dir", str(project)]
    result = runner.invoke(app, [*args, "--models", str(repo), "--json"])
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)["files"]
    return [yaml.safe_load(Path(f["path"]).read_text()) | {"_path": f["path"]} for f in files]


def _deployment(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [m for m in manifests if m["kind"] == "Deployment"]
    return found


@pytest.mark.parametrize("stack", ["gke-dev", "eks-dev"])
def test_vllm_release_renders_an_llm_workload(tmp_path: Path, stack: str) -> None:
    repo = c.vllm_repo(tmp_path / "repo", args=dict(c.VLLM_ARGS, tensor_parallel_size=2))
    keys = {"k8sGpusPerPod": 2, "k8sHfTokenSecret": "hf-token", "k8sWeightCacheClaim": "weights"}
    if stack == "gke-dev":
        keys |= {"gkeMachineType": "g2-standard-24", "gkeGpusPerNode": 2}
    else:
        keys |= {"eksGpuInstanceType": "g6e.12xlarge"}
    manifests = _render(_project(tmp_path, stack, **keys), stack, repo, tmp_path / "out")
    pod = _deployment(manifests)["spec"]["template"]["spec"]
    [triton] = pod["containers"]
    assert triton["image"].endswith("-vllm-python-py3")
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == 2
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "4Gi"}
    assert volumes["weight-cache"]["persistentVolumeClaim"] == {"claimName": "weights"}
    env = {e["name"]: e for e in triton["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "hf-token", "key": "token", "optional": True}  # fmt: skip
    assert env["HF_HOME"]["value"] == "/cache/huggingface"
    assert {"name": "weight-cache", "mountPath": "/cache"} in triton["volumeMounts"]
    probe = triton["startupProbe"]
    assert probe["failureThreshold"] * probe["periodSeconds"] >= llm.LLM_STARTUP_BUDGET_SECONDS
    queries = _engine_queries(manifests)
    assert queries and all("vllm:" in q for q in queries), queries  # engine metrics, not queue
    assert "--metrics-config=histogram_latencies=true" in triton["args"]
    tool = Path(sys.executable).with_name("kubernetes-validate")
    paths = [m["_path"] for m in manifests]
    checked = subprocess.run([str(tool), "--strict", "-k", K8S_VERSION, "--no-warn", *paths],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _engine_queries(manifests: list[dict[str, Any]]) -> list[str]:
    """The rendered ScaledObject's trigger queries, after it passes the vendored KEDA CRD
    schema (kubernetes-validate has no schema for custom resources and skips it)."""
    [scaled] = [m for m in manifests if m["kind"] == "ScaledObject"]
    document = {k: v for k, v in scaled.items() if k != "_path"}
    jsonschema.validate(document, _schema("kubernetes:keda.sh/v1alpha1:ScaledObject"))
    return [t["metadata"]["query"] for t in document["spec"]["triggers"]]


def test_trtllm_release_scales_on_its_batch_manager_metrics(tmp_path: Path) -> None:
    repo = c.trtllm_repo(tmp_path / "repo")
    manifests = _render(_project(tmp_path, "eks-dev"), "eks-dev", repo, tmp_path / "out")
    queries = _engine_queries(manifests)
    assert len(queries) == 2 and all("nv_trt_llm_" in q for q in queries), queries
    assert not any("nv_inference_queue_duration_us" in q for q in queries)


def test_pod_smaller_than_the_model_is_refused(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo", args=dict(c.VLLM_ARGS, tensor_parallel_size=4))
    project = _project(tmp_path, "gke-dev")
    args = ["render", "k8s", "--stack", "gke-dev", "--out", str(tmp_path / "o")]
    result = runner.invoke(app, [*args, "--project-dir", str(project), "--models", str(repo)])
    assert result.exit_code != 0
    assert "needs 4 GPUs per replica" in result.output and "g2-standard-48" in result.output
    assert not (tmp_path / "o").exists()


def test_broken_llm_repository_is_refused_before_rendering(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo", args="{")
    project = _project(tmp_path, "gke-dev")
    args = ["render", "k8s", "--stack", "gke-dev", "--out", str(tmp_path / "o")]
    result = runner.invoke(app, [*args, "--project-dir", str(project), "--models", str(repo)])
    assert result.exit_code != 0 and "TDK602" in result.output


def test_release_without_llm_keeps_the_workload() -> None:
    base = _config()
    assert serve_models(base, [Requirements("m", "onnxruntime")]) is base


def test_trtllm_flavour_and_mixed_engines() -> None:
    base = _config()
    fitted = serve_models(base, [Requirements("t", "python", engine="tensorrt_llm")])
    assert fitted.image == "nvcr.io/nvidia/tritonserver:25.09-trtllm-python-py3"
    assert fitted.shm_size == "2Gi"
    from tdk.errors import ConfigError

    with pytest.raises(ConfigError, match="mixes LLM engines"):
        serve_models(base, [Requirements("a", "vllm", engine="vllm"),
                            Requirements("b", "python", engine="tensorrt_llm")])  # fmt: skip


def test_engine_on_a_cpu_workload_is_refused() -> None:
    from dataclasses import replace

    from tdk.errors import ConfigError

    with pytest.raises(ConfigError, match="need GPUs"):
        serve_models(replace(_config(), kind="cpu"), [Requirements("a", "vllm", engine="vllm")])


def test_multi_gpu_node_shapes() -> None:
    assert (
        gcp_catalog.smallest_g2(4) == "g2-standard-48"
        and gcp_catalog.smallest_g2(2) == "g2-standard-24"
    )
    assert gcp_catalog.smallest_g2(9) is None


def _config() -> Any:
    from infra.k8s.config import AlertThresholds, WorkloadConfig
    from infra.k8s.spec import Scaling

    return WorkloadConfig(
        namespace="triton", image="nvcr.io/nvidia/tritonserver:25.09-py3", kind="gpu",
        gpus_per_pod=1, cpu="3", memory="12Gi", scaling=Scaling(1, 2, 1.0, 30, 300),
        exposure="cluster-ip", startup_budget_seconds=600, log_verbose=0,
        alerts=AlertThresholds(100, 1.0, 1.0, None),
    )  # fmt: skip


def test_flavour_older_than_its_first_release_is_refused() -> None:
    from dataclasses import replace

    from tdk.errors import ConfigError

    old = replace(_config(), image="nvcr.io/nvidia/tritonserver:23.08-py3")
    with pytest.raises(ConfigError, match=r"starts at 23\.10"):
        serve_models(old, [Requirements("a", "vllm", engine="vllm")])
    custom = replace(_config(), image="registry.example/triton-llm:latest")
    assert serve_models(custom, [Requirements("a", "vllm", engine="vllm")]).image == custom.image


@pytest.mark.parametrize("target", kubernetes_targets())
def test_a_pod_too_small_names_the_targets_own_nodes(target: str) -> None:
    """The hint names nodes the target can deploy (its own key, its catalog's fit); the shared
    layer named two targets' machines for every target, whichever it was."""
    from infra.targets import registry

    deploy = registry.get(target).deploy()
    hint = deploy.nodes_with(2)
    assert re.search(rf"\b{target}[A-Z]\w+", hint), hint  # a key of its own stack
    assert "no " in deploy.nodes_with(64)  # no catalog entry has 64 GPUs
    with pytest.raises(ConfigError) as refused:
        needs = [Requirements("m", "vllm", engine="vllm", gpus_per_replica=2)]
        serve_models(_config(), needs, deploy.nodes_with)
    assert hint in (refused.value.hint or "")
