"""The vLLM each ``<yy.mm>-vllm-python-py3`` image ships: every row names its source (Triton's
build.py at the release tag) and date; ``tdk validate --target`` checks against it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from infra.facts import llm
from infra.facts.llm import release_key, vllm_version
from tests.validate.llm import corpus as c


def test_every_vllm_row_has_its_source_and_date() -> None:
    releases = list(llm.VLLM_ROWS)
    assert releases == sorted(releases, key=release_key) and len(releases) >= 16
    tags = [row.tag for row in llm.VLLM_ROWS.values()]
    assert tags == sorted(tags, key=lambda t: tuple(int(p) for p in t[1:].split(".")))
    for release, row in llm.VLLM_ROWS.items():
        assert row.source.startswith("https://github.com/triton-inference-server/server/blob/v")
        assert row.source.endswith(f"/{row.tag}/build.py"), release
        assert row.checked == dt.date(2026, 11, 26)
        assert row.vllm[0].isdigit()
    assert llm.VLLM_VERSIONS["24.12"] == "0.5.5"  # agrees with the 24.12 release notes


def test_vllm_version_by_release_or_image() -> None:
    assert vllm_version("25.09") == "0.10.1.1"
    assert vllm_version("nvcr.io/nvidia/tritonserver:25.03-vllm-python-py3") == "0.7.3"
    assert vllm_version("26.05") is None  # no checked source names it: unknown, not guessed


def test_validate_target_checks_against_the_images_vllm(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path, args=dict(c.VLLM_ARGS, max_num_seq=4))
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
    (unknown,) = [f for f in findings if f["code"] == "TDK613"]
    assert "26.05-vllm-python-py3" in unknown["message"]
