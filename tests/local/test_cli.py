"""`tdk local up --detach | status | down | check` and `tdk invoke --target local`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.local.local_helpers import make_release, write_python_model

pytestmark = pytest.mark.e2e
runner = CliRunner()


@pytest.fixture()
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def test_up_status_invoke_down(release: Path, state_dir: Path) -> None:
    up = runner.invoke(
        app, ["local", "up", "--release", str(release), "--port", "0", "-d", "--json"]
    )
    assert up.exit_code == 0, up.output
    assert json.loads(up.output)["release"] == str(release)
    url = json.loads(up.output)["url"]
    try:
        # the switch token stays in the owner-only state file, never on stdout
        token = json.loads(next(state_dir.glob("local-*.json")).read_text())["control"]
        assert token and token not in up.output
        text = ["invoke", "--target-model", "tokenizer-0.tar.gz", "--text", "hello world"]
        result = runner.invoke(app, [*text, "--json"])
        assert result.exit_code == 0, result.output
        outputs = json.loads(result.output)["outputs"]
        assert outputs["token_ids"]["shape"] == [1, 128]
        assert outputs["token_ids"]["data"][0][0] == 1  # CLS first
        plain = runner.invoke(app, [*text, "--json-body", "--json"])
        assert json.loads(plain.output)["outputs"] == outputs

        wrong = runner.invoke(
            app, ["invoke", "--target-model", "text_classifier-0.tar.gz", "-i", "ids=[1]"]
        )
        assert wrong.exit_code == 2 and "no such input" in wrong.output

        status = runner.invoke(app, ["local", "status", "--json"])
        assert status.exit_code == 0, status.output
        document = json.loads(status.output)
        assert document["endpoint"]["url"] == url
        # the release, in one word: neither the status nor the endpoint says "store"
        assert document["release"] == document["endpoint"]["release"] == str(release)
        assert "store" not in document and "store" not in document["endpoint"]
        assert token not in status.output
        assert document["loaded"] == ["tokenizer-0.tar.gz"]
        assert document["metrics"]["Invocations"] == 2
        assert document["metrics"]["ModelCacheHit"] == 0.5  # a ratio, as SageMaker reports it
        assert document["metrics"]["ModelCacheHitSamples"] == 2
        bench = ["bench", "--target-model", "tokenizer-0.tar.gz", "-c", "1,2", "--duration", "0.5"]
        measured = runner.invoke(app, [*bench, "--json"])
        assert measured.exit_code == 0, measured.output
        levels = json.loads(measured.output)["levels"]
        assert [level["level"] for level in levels] == [1, 2]
        assert all(level["ok"] > 0 and not level["errors"] for level in levels)
        human = runner.invoke(app, ["local", "status"])
        assert "ModelLoadingWaitTime" in human.output and "LoadedModelCount" in human.output
    finally:
        down = runner.invoke(app, ["local", "down"])
    assert down.exit_code == 0, down.output
    again = runner.invoke(app, ["local", "status"])
    assert again.exit_code == 2 and "no local endpoint" in again.output


def test_check_reports_tritons_message_and_fails(tmp_path: Path, state_dir: Path) -> None:
    repo = tmp_path / "repo"
    write_python_model(repo, "good")
    write_python_model(repo, "bad", initialize="raise RuntimeError('weights are missing')")
    make_release(repo, tmp_path / "store", copies=1)
    result = runner.invoke(app, ["local", "check", "--release", str(tmp_path / "store"), "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output[result.output.index("{") :])
    assert document["release"] == str(tmp_path / "store") and "store" not in document
    verdicts = {m["target_model"]: m for m in document["models"]}
    assert verdicts["good-0.tar.gz"]["ok"] is True
    assert verdicts["bad-0.tar.gz"]["ok"] is False
    assert "weights are missing" in verdicts["bad-0.tar.gz"]["error"]


def test_up_names_an_unreachable_store(tmp_path: Path, state_dir: Path) -> None:
    missing = tmp_path / "nowhere"
    result = runner.invoke(app, ["local", "up", "--release", str(missing), "--port", "0", "-d"])
    assert result.exit_code == 1
    assert f"{missing}/manifest.json" in result.output


def test_missing_runtime_says_make_setup(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_TRITON_RUNTIME", str(tmp_path / "no-venv"))
    result = runner.invoke(app, ["local", "up", "--release", str(tmp_path), "-d"])
    assert result.exit_code == 1
    assert "make setup" in result.output


def test_demo_runs_on_a_small_release(tmp_path: Path, state_dir: Path, sample_repo: Path) -> None:
    """What `make demo` runs: every TargetModel cold then warm, LRU visible, endpoint stopped."""
    make_release(sample_repo, tmp_path / "store", copies=2, only=("tokenizer",))
    args = ["local", "demo", "--release", str(tmp_path / "store"), "-k", "1", "--warm", "2"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout[result.stdout.index("{\n") :])
    rows = {row["target_model"]: row for row in document["models"]}
    assert set(rows) == {"tokenizer-0.tar.gz", "tokenizer-1.tar.gz"}
    assert rows["tokenizer-1.tar.gz"]["lru_unloaded"] == "tokenizer-0.tar.gz"  # K = 1
    assert all(row["outputs"].startswith("token_ids [1, 128]") for row in rows.values())
    metrics = document["metrics"]
    assert metrics["Invocations"] == 2 * 3 and metrics["ModelUnloads"] == 1
    assert metrics["ModelCacheHit"] == 4 / 6  # 2 cold + 4 warm requests
    assert runner.invoke(app, ["local", "status", "--endpoint", "demo"]).exit_code == 2  # stopped
