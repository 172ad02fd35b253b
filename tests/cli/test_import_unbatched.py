"""`tdk import --max-batch-size 0` as Triton takes it, and model files that are not models
(issue 49 item 3): a model imported without batching carries its batch axis in its dims and
serves; `--tokenizer` with it is refused before anything runs; two stray bytes named
model.onnx are refused by validate and import instead of passing as a model with no inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.config import load_config

runner = CliRunner()


def test_max_batch_size_0_keeps_the_batch_axis_in_the_dims(bert_onnx: Path, tmp_path: Path) -> None:
    out = tmp_path / "repo"
    args = ["import", str(bert_onnx), "--name", "bert", "--out", str(out), "--max-batch-size", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    config = load_config(out / "bert" / "config.pbtxt")
    assert config.max_batch_size == 0 and not config.HasField("dynamic_batching")
    assert {t.name: list(t.dims) for t in config.input} == {
        "input_ids": [-1, -1], "attention_mask": [-1, -1], "token_type_ids": [-1, -1],
    }  # fmt: skip
    assert [list(t.dims) for t in config.output] == [[-1, 3]]
    assert "max_batch_size 0 as asked" in result.output
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0
    assert not list(out.glob(".tdk-import-*"))


@pytest.mark.e2e
def test_an_unbatched_import_serves(bert_onnx: Path, tmp_path: Path, users_folder: Path) -> None:
    args = ["import", str(bert_onnx), "--name", "bert", "--out", "repo", "--max-batch-size", "0"]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, ["package", "repo", "--release", "release"]).exit_code == 0
    up = runner.invoke(app, ["local", "up", "--release", "release", "--port", "0", "-d"])
    assert up.exit_code == 0, up.output
    try:
        ids = json.dumps([[2, 7, 9], [4, 5, 6]])
        inputs = [f"input_ids={ids}", f"attention_mask={json.dumps([[1] * 3] * 2)}"]
        inputs.append(f"token_type_ids={json.dumps([[0] * 3] * 2)}")
        invoke = ["invoke", "--target-model", "bert-0", "--json"]
        answer = runner.invoke(app, [*invoke, *(a for i in inputs for a in ("--input", i))])
        assert answer.exit_code == 0, answer.output
        assert json.loads(answer.stdout)["outputs"]["logits"]["shape"] == [2, 3]
    finally:
        assert runner.invoke(app, ["local", "down"]).exit_code == 0


def test_tokenizer_without_batching_is_refused_before_any_export(tmp_path: Path) -> None:
    source = tmp_path / "hf"
    source.mkdir()
    (source / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (source / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    out = tmp_path / "repo"
    args = ["import", str(source), "--name", "m", "--out", str(out), "--tokenizer"]
    result = runner.invoke(app, [*args, "--max-batch-size", "0"])
    assert result.exit_code == 2 and "--max-batch-size 0" in result.output
    assert not out.exists()


@pytest.mark.parametrize("garbage", [b"hi", b"\x08\x07", b""])
def test_a_model_onnx_that_is_not_a_model_is_refused(garbage: bytes, tmp_path: Path) -> None:
    model = tmp_path / "repo" / "m" / "1" / "model.onnx"
    model.parent.mkdir(parents=True)
    model.write_bytes(garbage)
    result = runner.invoke(app, ["validate", str(tmp_path / "repo")])
    assert result.exit_code == 1, result.output
    assert "0 input(s)" not in result.output
    release = str(tmp_path / "r")
    packaged = runner.invoke(app, ["package", str(tmp_path / "repo"), "--release", release])
    assert packaged.exit_code != 0 and not (tmp_path / "r" / "manifest.json").exists()
    imported = runner.invoke(app, ["import", str(model), "--name", "x", "--out", str(tmp_path)])
    assert imported.exit_code != 0 and "not an ONNX model" in imported.output
