"""A user's BERT-shaped ONNX model from `tdk import` to `tdk tune` on the real local Triton,
no hand edits (issue 35): import -> validate -> package -> local up -> invoke --example ->
bench -> tune. Each step would fail on an example input outside the token-type table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

pytestmark = pytest.mark.e2e
runner = CliRunner()
# a short tune: one config family, one window per point, no drift or duel repeats
SHORT_TUNE = ["--latency-budget-ms", "5000", "--duration", "0.2", "--max-windows", "1"]
SHORT_TUNE += ["--instances", "1", "--max-batch-sizes", "4", "--queue-delays-us", "0"]
SHORT_TUNE += ["-c", "1", "--repeats", "0", "--pairs", "0", "--processes", "1"]
SHORT_TUNE += ["--accelerators", "none", "--search", "full", "--json"]


@pytest.fixture(scope="module")
def imported(bert_onnx: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    repo = tmp_path_factory.mktemp("user") / "repo"
    result = runner.invoke(app, ["import", str(bert_onnx), "--name", "bert", "--out", str(repo)])
    assert result.exit_code == 0, result.output
    return repo / "bert"


@pytest.fixture(scope="module")
def served(imported: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The imported model validated, packaged and served by `tdk local up`."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("TDK_STATE_DIR", str(state))
    checked = runner.invoke(app, ["validate", str(imported.parent)])
    assert checked.exit_code == 0, checked.output
    store = tmp_path_factory.mktemp("release")
    packaged = runner.invoke(app, ["package", str(imported.parent), "--release", f"file://{store}"])
    assert packaged.exit_code == 0, packaged.output
    up = runner.invoke(app, ["local", "up", "--release", str(store), "--port", "0", "-d", "--json"])
    assert up.exit_code == 0, up.output
    try:
        yield "bert-0.tar.gz"
    finally:
        down = runner.invoke(app, ["local", "down"])
        monkeypatch.undo()
        assert down.exit_code == 0, down.output


def test_invoke_example_is_accepted(served: str) -> None:
    result = runner.invoke(app, ["invoke", "--target-model", served, "--example", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["logits"]["shape"] == [1, 3]


def test_bench_measures_without_errors_and_fails_when_all_fail(served: str) -> None:
    bench = [
        "bench",
        "--target-model",
        served,
        "-c",
        "1",
        "--duration",
        "0.3",
        "--max-windows",
        "1",
    ]
    result = runner.invoke(app, [*bench, "--json"])
    assert result.exit_code == 0, result.output
    [level] = json.loads(result.stdout)["levels"]
    assert level["ok"] > 0 and not level["errors"]
    # a 2-row token-type table: refused before anything is sent (issue 49 item 2), where it was
    # sent and failed every request; a level without a success failing the bench is tested in
    # tests/perf/test_measure.py and tests/cli/test_bench_table.py
    outside = runner.invoke(app, [*bench, "--input", "token_type_ids=[[2]]"])
    assert outside.exit_code == 2, outside.output
    assert "value 2 is outside [0, 1]" in outside.output and "Traceback" not in outside.output


def test_tune_runs_on_the_imported_model(imported: Path) -> None:
    result = runner.invoke(app, ["tune", str(imported), *SHORT_TUNE])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["points"] and all(p["errors"] == 0 for p in report["points"])
    assert report["choice"] is not None


def test_tune_input_replaces_a_tensor(imported: Path) -> None:
    unknown = runner.invoke(app, ["tune", str(imported), *SHORT_TUNE, "-i", "segment=[[0]]"])
    assert unknown.exit_code == 2 and "no such input" in unknown.output
    given = ["-i", "token_type_ids=[[2]]"]  # outside the 2-row table
    outside = runner.invoke(app, ["tune", str(imported), *SHORT_TUNE, *given])
    assert outside.exit_code == 2, outside.output  # the given tensor replaced the example's
    assert "token_type_ids: value 2 is outside [0, 1]" in outside.output  # and was refused


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sample requests: a .npz of 5 tokens and a .json of 3 (token types left out)."""
    folder = tmp_path_factory.mktemp("samples")
    ids = np.array([[2, 17, 45, 9, 3]])
    np.savez(folder / "one.npz", input_ids=ids, attention_mask=np.ones_like(ids))
    (folder / "two.json").write_text('{"input_ids": [[2, 8, 3]], "attention_mask": [[1, 1, 0]]}')
    return folder


def test_bench_and_tune_send_sample_requests(served: str, imported: Path, samples: Path) -> None:
    bench = ["bench", "--target-model", served, "-c", "1", "--duration", "0.3"]
    result = runner.invoke(app, [*bench, "--max-windows", "1", "--samples", str(samples), "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["requests_cycled"] == 2 and record["levels"][0]["ok"] > 0
    tuned = runner.invoke(app, ["tune", str(imported), *SHORT_TUNE, "--samples", str(samples)])
    assert tuned.exit_code == 0, tuned.output
    assert all(p["errors"] == 0 for p in json.loads(tuned.stdout)["points"])
    (samples / "three.json").write_text('{"token_type_ids": [[2]]}')  # outside the table
    try:  # refused before sending, naming the sample file (issue 49 item 2)
        failed = runner.invoke(app, [*bench, "--samples", str(samples)])
        assert failed.exit_code == 2, failed.output
        assert "three.json: token_type_ids: value 2 is outside [0, 1]" in failed.output
    finally:
        (samples / "three.json").unlink()
