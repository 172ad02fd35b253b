"""The image facts describe what deploys: every image has its Triton and CUDA version, and
``validate --target`` checks against the image the stacks deploy, refusing one without facts.

Source: NVIDIA's Triton release notes (rel-26-05.html: CUDA 13.2.1) and the server's GitHub
releases (2.69.0 = 26.05), checked 2026-11-26.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.aws.sagemaker import instances
from infra.facts import hardware as facts
from infra.facts import triton as tf
from tests.validate.helpers import make_repo

PLAN = """name: "engine"
platform: "tensorrt_plan"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
"""


def _validate(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["validate", str(repo), *args, "--json"])
    return result.exit_code, result.stdout if result.exit_code != 2 else result.output


@pytest.fixture
def plan_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"engine": (PLAN, {"1/model.plan": b"\0plan"})})


def test_every_image_records_its_cuda_version_and_its_triton_where_found() -> None:
    for version, image in facts.IMAGES.items():
        assert image.triton is None or image.triton.startswith("2."), version
        assert image.cuda[0] >= 12, version
    assert all(facts.IMAGES[v].triton for v in facts.IMAGES if v <= "26.09")
    assert (facts.IMAGES["26.05"].triton, facts.IMAGES["26.05"].cuda) == ("2.69.0", (13, 2))


def test_the_checked_default_is_the_image_the_stacks_deploy() -> None:
    assert tf.default_checked_image() == tf.default_sagemaker_triton_version() == "26.05"
    assert tf.default_kubernetes_triton_image().endswith(":26.05-py3")


def test_validate_checks_a_plan_against_the_deployed_image(plan_repo: Path) -> None:
    """Row 6: ``--target sagemaker --instance-type ml.g5.xlarge`` used to check 25.09."""
    status, out = _validate(plan_repo, "--target", "sagemaker", "--instance-type", "ml.g5.xlarge")
    findings = json.loads(out[: out.rindex("]") + 1])
    assert status == 1 and [f["code"] for f in findings] == ["TDK906"]
    assert "Triton 26.05" in findings[0]["message"] and "25.09" not in out


def test_an_image_without_facts_is_refused(
    plan_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newer sagemaker-core listing an image the table lacks: refused, no silent fallback."""
    listed = [*tf.sagemaker_image_versions(), "26.11"]
    monkeypatch.setattr(tf, "sagemaker_image_versions", lambda: listed)
    monkeypatch.setattr(instances, "image_versions", lambda: listed)
    monkeypatch.setattr(instances, "image_regions", lambda version: ["us-east-1"])
    status, out = _validate(plan_repo, "--target", "sagemaker", "--instance-type", "ml.g5.xlarge")
    assert status == 1, out  # refused by the feasibility path (TDK910), not checked against 26.05
    assert "26.11" in out and "infra/facts/hardware.py" in out
    status, out = _validate(plan_repo, "--target", "gke", "--gpu", "nvidia-l4", "--image", "26.11")
    assert status == 1 and "26.11" in out


def test_the_facts_lookup_refuses_a_release_nvidia_has_not_published(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A row is a published release (its notes exist); 26.10's Triton version was not found,
    and the row still serves (its CUDA and compute capability are known)."""
    from tdk.errors import ConfigError

    assert tf.image_facts("26.10").cuda == (13, 4)
    monkeypatch.delitem(facts.IMAGES, "26.08")
    with pytest.raises(ConfigError, match=r"26\.08 is not a release"):
        tf.image_facts("26.08")


def _codes(out: str) -> list[str]:
    return [f["code"] for f in json.loads(out[: out.rindex("]") + 1])]


def test_a_t4_plan_on_an_a10g_is_an_error_on_the_default_image(plan_repo: Path) -> None:
    """Row 6 of issue 35: a plan built on a T4 (7.5) checked for ml.g5.xlarge (A10G, 8.6)
    passed on 26.05 (TensorRT unknown) and warned on 25.09; Triton cannot load it: an error."""
    g5 = ["--target", "sagemaker", "--instance-type", "ml.g5.xlarge"]
    for built in ("7.5:10.13", "7.5:10.13@26.05"):
        status, out = _validate(plan_repo, *g5, "--trt-built-for", built)
        assert (status, _codes(out)) == (1, ["TDK907"]), out
        assert "7.5" in out and "A10G" in out
    status, out = _validate(plan_repo, *g5, "--image", "25.09", "--trt-built-for", "7.5:10.13")
    assert (status, _codes(out)) == (1, ["TDK907"])
    # built on an A10G in the TensorRT container of the release Triton 26.05 is built on: loads
    assert _validate(plan_repo, *g5, "--trt-built-for", "8.6:10.16@26.04") == (0, "[]\n")
    # the container of the image's own release may carry another TensorRT: not shown to load
    status, out = _validate(plan_repo, *g5, "--trt-built-for", "8.6:10.16@26.05")
    assert (status, _codes(out)) == (1, ["TDK906"]) and "26.04 release it is built on" in out


def test_a_triton_release_names_the_base_its_tensorrt_comes_from() -> None:
    """Triton's build.py builds 26.05 on 26.04's ``py3-min`` base and 26.06 on 26.05's (server
    tags v2.69.0, v2.70.0; read 2026-11-27): a plan for them comes from that TensorRT container."""
    assert facts.IMAGES["26.05"].base == "26.04" and facts.IMAGES["26.06"].base == "26.05"
    assert facts.IMAGES["25.09"].base == "25.09" and facts.IMAGES["26.07"].base == "26.07"


def test_another_tensorrt_or_release_is_an_error(plan_repo: Path) -> None:
    g5 = ["--target", "sagemaker", "--instance-type", "ml.g5.xlarge"]
    status, out = _validate(plan_repo, *g5, "--image", "25.09", "--trt-built-for", "8.6:10.4")
    assert (status, _codes(out)) == (1, ["TDK907"]) and "10.4" in out
    assert _validate(plan_repo, *g5, "--image", "25.09", "--trt-built-for", "8.6:10.13")[0] == 0
    if facts.IMAGES["26.05"].tensorrt is None:  # compared by the container release instead
        status, out = _validate(plan_repo, *g5, "--trt-built-for", "8.6:10.13@25.09")
        assert (status, _codes(out)) == (1, ["TDK906"]) and "25.09" in out


def test_a_hardware_compatible_plan_runs_on_ampere_and_later_only(plan_repo: Path) -> None:
    l4 = ["--target", "gke", "--gpu", "nvidia-l4", "--image", "25.09"]
    assert _validate(plan_repo, *l4, "--trt-built-for", "ampere+:10.13")[0] == 0
    t4 = ["--target", "sagemaker", "--instance-type", "ml.g4dn.xlarge", "--image", "25.09"]
    status, out = _validate(plan_repo, *t4, "--trt-built-for", "ampere+:10.13")
    assert (status, _codes(out)) == (1, ["TDK907"]) and "ampere+" in out
