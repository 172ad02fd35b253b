"""Values the manifest knows a model refuses are refused before they are sent (issue 49 item
2): a token id beyond the vocabulary or a token type beyond the table came back as HTTP 500
from the endpoint ("the model failed to load or run"), and bench called such a level stable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()


@pytest.mark.e2e
def test_out_of_range_inputs_are_refused_before_sending(
    bert_onnx: Path, tmp_path: Path, users_folder: Path
) -> None:
    assert (
        runner.invoke(app, ["import", str(bert_onnx), "--name", "bert", "--out", "repo"]).exit_code
        == 0
    )
    assert runner.invoke(app, ["package", "repo", "--release", "release"]).exit_code == 0
    up = runner.invoke(app, ["local", "up", "--release", "release", "--port", "0", "-d"])
    assert up.exit_code == 0, up.output
    try:
        base = ["--target-model", "bert-0", "--example"]
        ids = ["--input", "input_ids=[[2, 7592, 9]]"]
        refused = runner.invoke(app, ["invoke", *base, *ids])
        assert refused.exit_code == 2, refused.output
        assert "input_ids" in refused.output and "7592" in refused.output
        assert "[0, 99]" in refused.output
        types = runner.invoke(app, ["invoke", *base, "--input", "token_type_ids=[[0, 2, 0]]"])
        assert types.exit_code == 2 and "[0, 1]" in types.output, types.output
        samples = tmp_path / "samples"
        samples.mkdir()
        (samples / "a.json").write_text(json.dumps({"input_ids": [[1, 500]]}))
        bench = ["bench", *base, "-c", "1", "--duration", "0.2", "--samples", str(samples)]
        bench_refused = runner.invoke(app, bench)
        assert bench_refused.exit_code == 2 and "500" in bench_refused.output
        status = json.loads(runner.invoke(app, ["local", "status", "--json"]).stdout)
        assert status["metrics"]["Invocations"] == 0  # nothing reached the endpoint
        long = json.dumps([[1] * 65])
        too_long = ["--input", f"input_ids={long}", "--input", f"attention_mask={long}"]
        seq = runner.invoke(app, ["invoke", *base, *too_long])
        assert seq.exit_code == 2 and "is 65, longer than the 64" in seq.output, seq.output
        ok = runner.invoke(app, ["invoke", *base, "--input", "input_ids=[[2, 99, 9]]", "--json"])
        assert ok.exit_code == 0, ok.output
    finally:
        assert runner.invoke(app, ["local", "down"]).exit_code == 0
