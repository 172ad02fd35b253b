"""Every published Triton release can be pinned (issue 37, item 2).

Sources (checked 2026-11-27): NVIDIA's release notes rel-26-06 ... rel-26-10.html (CUDA 13.3.0,
13.3.1, 13.4.1, 13.4.1, 13.4.3; compute capability 7.5 and later); the server's build.py
TRITON_VERSION_MAP (2.70.0 = 26.06, 2.71.0 = 26.07, 2.72.0 = 26.08). No 26.11 notes exist.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.facts import doctor, findings
from infra.facts import hardware as facts
from infra.facts import triton as tf
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import run_stack
from tests.validate.helpers import make_repo

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = {"26.06": (13, 3), "26.07": (13, 3), "26.08": (13, 4), "26.10": (13, 4)}
PLAN = """name: "engine"
platform: "tensorrt_plan"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
"""


def _pinned(tmp_path: Path, tag: str, instance: str = "g5.xlarge") -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    shutil.copy(ROOT / "Pulumi.yaml", project)
    stack = (ROOT / "Pulumi.eks-dev.yaml").read_text().replace("g5.xlarge", instance)
    stack += f"  triton-deploy-kit:k8sTritonImage: nvcr.io/nvidia/tritonserver:{tag}-py3\n"
    (project / "Pulumi.eks-pin.yaml").write_text(stack)
    return project


def _validate(repo: Path, project: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    result = CliRunner().invoke(
        app, ["validate", str(repo), "--stack", "eks-pin", "--project-dir", str(project),
              "--json", *extra],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_every_release_row_has_its_cuda_source_and_date() -> None:
    for version, image in facts.IMAGES.items():
        assert image.cuda[0] >= 12 and image.checked >= "2026-11-26", version
        assert image.triton is None or image.triton.startswith("2."), version
    for version, cuda in PUBLISHED.items():
        row = facts.IMAGES[version]
        assert row.cuda == cuda and row.min_compute == (7, 5)
        assert row.source.endswith(f"rel-{version.replace('.', '-')}.html")
    assert [facts.IMAGES[v].triton for v in ("26.06", "26.07", "26.08")] == [
        "2.70.0", "2.71.0", "2.72.0",
    ]  # fmt: skip
    assert "26.11" not in facts.IMAGES  # not published by 2026-11-27


@pytest.mark.parametrize("version", sorted(PUBLISHED))
def test_pinning_a_published_release_on_eks_validates_against_its_facts(
    tmp_path: Path, sample_repo: Path, version: str
) -> None:
    project = _pinned(tmp_path, version)
    assert _validate(sample_repo, project) == (0, [])
    plans = make_repo(tmp_path / "repo", {"engine": (PLAN, {"1/model.plan": b"\0plan"})})
    _, findings = _validate(plans, project)
    assert [f["code"] for f in findings] == ["TDK906"]
    assert f"Triton {version}" in findings[0]["message"]  # checked against this release's row
    # the release's TensorRT is unknown: the message names the source that lacks it
    notes = f"rel-{version.replace('.', '-')}.html list no container contents"
    assert f"TensorRT unknown for Triton {version}" in findings[0]["message"]
    assert notes in findings[0]["message"]


@pytest.mark.parametrize("version", sorted(PUBLISHED))
def test_a_plan_built_on_the_release_base_validates_where_the_base_is_known(
    tmp_path: Path, version: str
) -> None:
    """An engine recorded as built in the TensorRT container of the release the image is built on
    (26.06 on 26.05, build.py's upstream_container_version) loads; 26.10's base is assumed, and
    the plan is accepted with the assumption named only where nothing was recorded."""
    project = _pinned(tmp_path, version)
    plans = make_repo(tmp_path / "repo", {"engine": (PLAN, {"1/model.plan": b"\0plan"})})
    base = facts.IMAGES[version].base
    assert base == {"26.06": "26.05"}.get(version, version)
    assert _validate(plans, project, "--trt-built-for", f"8.6:10.14@{base}") == (0, [])
    status, findings = _validate(plans, project, "--trt-built-for", "8.6:10.14@25.09")
    assert status == 1 and [f["code"] for f in findings] == ["TDK906"]
    assert "Frameworks Support Matrix" in findings[0]["fix"]


def test_an_assumed_base_release_is_said_where_a_plan_is_checked(tmp_path: Path) -> None:
    plans = make_repo(tmp_path / "repo", {"engine": (PLAN, {"1/model.plan": b"\0plan"})})
    _, findings = _validate(plans, _pinned(tmp_path, "26.10"))
    assert "built on the 26.10 release by assumption" in findings[0]["message"]
    (tmp_path / "b").mkdir()
    _, findings = _validate(plans, _pinned(tmp_path / "b", "26.08"))
    assert "by assumption" not in findings[0]["message"]


def test_missing_tensorrt_and_driver_name_the_source_that_lacks_them() -> None:
    for version in ("26.05", *PUBLISHED):
        row = facts.IMAGES[version]
        assert row.tensorrt is None and row.driver is None
        notes = f"rel-{version.replace('.', '-')}.html"
        assert notes in row.tensorrt_text() and "compatibility.md" in row.tensorrt_text()
        assert notes in row.driver_text() and "requires the NVIDIA Driver release" in (
            row.driver_text()
        )
    assert facts.IMAGES["25.09"].tensorrt_text() == "TensorRT 10.13"
    assert [v for v, row in facts.IMAGES.items() if not row.base_verified] == ["26.09", "26.10"]


@pytest.mark.parametrize("version", sorted(PUBLISHED))
def test_the_eks_program_deploys_the_pinned_release(version: str) -> None:
    run = run_stack(
        "eks-dev", overrides={"k8sTritonImage": f"nvcr.io/nvidia/tritonserver:{version}-py3"}
    )
    (deployment,) = run.of_type("kubernetes:apps/v1:Deployment")
    images = [c["image"] for c in deployment.inputs["spec"]["template"]["spec"]["containers"]]
    assert f"nvcr.io/nvidia/tritonserver:{version}-py3" in images


def test_a_pinned_release_refuses_a_gpu_below_its_compute_capability() -> None:
    with pytest.raises(ConfigError, match=r"compute capability 7\.5"):
        tf.check_compute("instance", "p3.2xlarge", facts.GPUS["V100"], "26.08")
    tf.check_compute("instance", "g4dn.xlarge", facts.GPUS["T4"], "26.08")


def test_an_unpublished_tag_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"engine": (PLAN, {"1/model.plan": b"\0plan"})})
    status, findings = _validate(repo, _pinned(tmp_path, "26.11"))
    assert status == 1 and [f["code"] for f in findings] == ["TDK910"]
    assert "26.11" in findings[0]["message"] and "26.10" in findings[0]["fix"]


def test_the_default_stays_what_sagemaker_core_lists_and_doctor_names_newer() -> None:
    assert tf.default_checked_image() == tf.default_sagemaker_triton_version() == "26.05"
    (finding,) = doctor.newer_release_findings()
    assert finding.status == "aged" and finding.value == "26.06, 26.07, 26.08, 26.09, 26.10"
    assert "26.05" in finding.note and "k8sTritonImage" in finding.note


def test_doctor_is_quiet_when_the_default_is_the_newest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tf, "default_sagemaker_triton_version", lambda: "26.10")
    (finding,) = doctor.newer_release_findings()
    assert finding.status == "ok" and finding.value == "none"


def test_doctor_names_the_missing_tensorrt_driver_and_base_of_the_pinned_release(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(_pinned(tmp_path, "26.10")), "--json",
              "--stack", "eks-pin"], env={"TDK_TODAY": "2026-11-27"},
    )  # fmt: skip
    found = {f["fact"]: f for f in json.loads(result.stdout)["stacks"]["eks-pin"]}
    plan = found["Triton 26.10 TensorRT / driver / base"]
    assert plan["status"] == "aged" and plan["source"].endswith("rel-26-10.html")
    assert "TensorRT unknown" in plan["note"] and "by assumption" in plan["note"]
    assert "requires the NVIDIA Driver release" in plan["note"]
    old = findings.image_engine_finding("25.09")
    assert old.status == "aged" and "TensorRT 10.13" in old.note  # its driver is not recorded
