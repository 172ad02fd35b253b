"""Engine images against node drivers (issue 48 item 4): each engine image's CUDA driver
(compatibility.md r26.08) against each target's node driver, decided by CUDA's compatibility
rules, said the same by validate/feasible, the Pulumi program and ``tdk doctor``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.config import ConfigReader
from infra.facts import drivers
from infra.facts.drivers import NodeDriver
from infra.targets import stacks
from infra.targets.feasibility import feasible
from tests.infra.pulumi_harness import ROOT, run_stack, stack_config
from tests.validate.llm import corpus as c

EKS_AMI = "github.com/awslabs/amazon-eks-ami/blob/81fec2e"
MATRIX = "triton-inference-server/server/blob/6fa22ae"
COMPAT = "docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
FORWARD = "docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
VLLM_26_05 = "nvcr.io/nvidia/tritonserver:26.05-vllm-python-py3"


def _stack(name: str, overrides: dict[str, Any]) -> stacks.StackSettings:
    return stacks.settings(ConfigReader(stack_config(name, overrides).get), name)


def test_verdicts_follow_cudas_compatibility_rules() -> None:
    node = NodeDriver("595.58.03", "https://x")
    native = drivers.verdict(VLLM_26_05, node)
    assert native is not None and native.runs and native.native  # the driver CUDA 13.2 ships
    minor = drivers.verdict(VLLM_26_05, NodeDriver("580.159.03", "https://x"))
    assert minor is not None and minor.runs and not minor.native
    assert "minor version compatibility" in minor.message and COMPAT in minor.message
    # below CUDA 13's 580: only forward compatibility, on data-center GPUs, on branches NVIDIA
    # supports (not recorded): unknown on an A10, refused on a GPU outside the data-center line
    old = drivers.verdict(VLLM_26_05, NodeDriver("570.211.01", "https://x"), "A10")
    assert old is not None and old.runs is None and "below CUDA 13.x's minimum" in old.message
    assert FORWARD in old.message and "data-center GPU (A10)" in old.message
    rtx = drivers.verdict(VLLM_26_05, NodeDriver("570.211.01", "https://x"), "RTX 4090")
    assert rtx is not None and rtx.runs is False and "cannot run" in rtx.message
    unknown = drivers.verdict(VLLM_26_05, NodeDriver(None, "", why="no source"))
    assert unknown is not None and unknown.runs is None and "no source" in unknown.message
    unrecorded = drivers.verdict("nvcr.io/nvidia/tritonserver:26.09-vllm-python-py3", node)
    assert (
        unrecorded is not None and unrecorded.runs is None and "not recorded" in unrecorded.message
    )
    assert drivers.verdict("nvcr.io/nvidia/tritonserver:26.05-py3", node) is None
    # the table as compatibility.md r26.08 gives it
    assert drivers.engine_driver("x:26.07-trtllm-python-py3") == ((13, 1), "590.44.01")
    assert drivers.engine_driver("x:26.06-vllm-python-py3") == ((13, 3), "610.43.02")
    assert drivers.engine_driver("x:26.08-vllm-python-py3") == ((13, 4), "615.61")


def test_eks_engine_image_runs_through_minor_compatibility_and_says_so(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo")
    result = feasible(_stack("eks-dev", {"k8sModels": str(repo)}))
    (said,) = [f for f in result.findings if f.code == "TDK918"]
    assert said.severity == "warning" and result.ok, result.findings
    assert "580.159.03" in said.message and EKS_AMI in said.message
    assert MATRIX in said.message and COMPAT in said.message and "595.58.03" in said.message


def test_validate_stack_says_whether_the_engine_image_runs(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo")
    args = ["validate", str(repo), "--target", "eks", "--instance-type", "g5.xlarge", "--json"]
    result = CliRunner().invoke(app, args)
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    (said,) = [f for f in findings if f["code"] == "TDK918"]
    assert "minor version compatibility" in said["message"] and EKS_AMI in said["message"]


def test_doctor_says_each_engine_image_on_the_node_driver_with_sources() -> None:
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--stack", "eks-dev", "--json"],
        env={"TDK_TODAY": "2026-12-07"},
    )  # fmt: skip
    report = json.loads(result.stdout)
    lines = report["feasibility"]["eks-dev"]["engine_driver"]
    assert len(lines) == 2, lines  # the trtllm and the vllm image of the stack's release
    assert all(EKS_AMI in line and MATRIX in line and COMPAT in line for line in lines)
    gke = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--stack", "gke-dev", "--json"],
        env={"TDK_TODAY": "2026-12-07"},
    )  # fmt: skip
    said = json.loads(gke.stdout)["feasibility"]["gke-dev"]["engine_driver"]
    assert said and all("node driver unknown" in line for line in said)
    assert all("gkeGpuDriverVersion" in line for line in said)
    human = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--stack", "eks-dev"],
        env={"TDK_TODAY": "2026-12-07"},
    )  # fmt: skip
    assert "engine images on the node driver" in human.output


def test_the_program_deploys_and_says_what_validate_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pulumi up on eks with a vLLM model: not refused (it runs), and the same TDK918 text
    validate gives is logged as a Pulumi warning."""
    import pulumi

    said: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: said.append(message))
    repo = c.vllm_repo(tmp_path / "repo")
    run = run_stack("eks-dev", {"k8sModels": str(repo)})
    assert run.of_type("kubernetes:apps/v1:Deployment")
    (line,) = [m for m in said if m.startswith("TDK918")]
    assert "580.159.03" in line and EKS_AMI in line and "minor version compatibility" in line
