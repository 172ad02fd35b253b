"""The vLLM and TensorRT-LLM each image release ships, from NVIDIA's compatibility matrix
(dated, sourced); ``tdk validate --target`` checks against the image's vLLM."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from infra.facts import llm
from infra.facts.llm import release_key, vllm_version
from tests.validate.llm import corpus as c


def test_engine_versions_are_nvidias_matrix() -> None:
    """Every release of both flavours from NVIDIA's compatibility matrix (26.03 was recorded
    as vLLM 0.16.0; 26.05-26.07 were unknown)."""
    assert llm.MATRIX.checked == dt.date(2026, 11, 27) and "compatibility.md" in llm.MATRIX.url
    for table in (llm.VLLM_VERSIONS, llm.TRTLLM_VERSIONS):
        releases = list(table)
        assert releases == sorted(releases, key=release_key) and releases[0] == "24.04"
    vllm = {"26.03": "0.17.1", "26.05": "0.19.0", "26.06": "0.22.1", "26.07": "0.24.0"}
    assert {r: llm.VLLM_VERSIONS[r] for r in vllm} == vllm
    trt = {"26.01": "1.1.0", "26.02": "1.1.0", "26.03": "1.2.0"}
    trt |= {f"26.0{m}": "1.2.1" for m in range(4, 8)}
    assert {r: llm.TRTLLM_VERSIONS[r] for r in trt} == trt
    assert llm.VLLM_VERSIONS["24.12"] == "0.5.5"  # agrees with the 24.12 release notes


def test_vllm_version_by_release_or_image() -> None:
    assert vllm_version("25.09") == "0.10.1.1"
    assert vllm_version("nvcr.io/nvidia/tritonserver:25.03-vllm-python-py3") == "0.7.3"
    assert vllm_version("26.05") == "0.19.0"
    assert vllm_version("24.03") is None  # before the matrix: unknown, not guessed
    assert llm.trtllm_version("nvcr.io/nvidia/tritonserver:26.05-trtllm-python-py3") == "1.2.1"


def test_validate_target_checks_against_the_images_vllm(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path, args=dict(c.VLLM_ARGS, max_num_seq=4, disable_log_requests=True))
    where = ["--target", "gke", "--gpu", "nvidia-l4", "--json"]
    result = CliRunner().invoke(app, ["validate", str(repo), *where, "--image", "25.09"])
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    typos = {f["field"]: f["message"] for f in findings if f["code"] == "TDK603"}
    assert "vLLM 0.10.1.1 EngineArgs" in typos["model.json max_num_seq"], result.output
    # the vllm_backend sample's disable_log_requests became a property (not an init field)
    # of AsyncEngineArgs in 0.10: AsyncEngineArgs(**model_json) refuses it there
    assert "'enable_log_requests'" in typos["model.json disable_log_requests"]
    assert "TDK613" not in {f["code"] for f in findings}
    result = CliRunner().invoke(app, ["validate", str(repo), *where, "--image", "26.05"])
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    assert "TDK613" not in {f["code"] for f in findings}  # 26.05 ships 0.19.0, recorded
    result = CliRunner().invoke(app, ["validate", str(repo), *where, "--image", "24.03"])
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    (unknown,) = [f for f in findings if f["code"] == "TDK613"]
    assert "24.03-vllm-python-py3" in unknown["message"]
    assert "engine arguments checked against" in unknown["message"]  # which check was skipped


def test_validate_target_names_the_images_trtllm_for_an_llm_api_model(tmp_path: Path) -> None:
    """Issue 38 item 2: the image's TensorRT-LLM reaches the LLM() check (TDK613 says which
    release could not be checked, and against what; 1.2.1 is recorded, issue 48 item 3)."""
    where = ["--target", "gke", "--gpu", "nvidia-l4", "--json"]
    repo = str(c.llm_api_repo(tmp_path))
    result = CliRunner().invoke(app, ["validate", repo, *where, "--image", "26.05"])
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    assert "TDK613" not in {f["code"] for f in findings}, findings
    result = CliRunner().invoke(app, ["validate", repo, *where, "--image", "26.08"])
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    (warned,) = [f for f in findings if f["code"] == "TDK613"]
    assert (
        "TensorRT-LLM version of the 26.08-trtllm-python-py3 image is not recorded"
        in (warned["message"])
    )
