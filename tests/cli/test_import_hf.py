"""`tdk import` of a local Hugging Face model directory: a tiny BERT with random weights (made
here, no hub) exported with dynamic batch and sequence axes, its outputs equal to the torch
model's; `--tokenizer` adds the WordPiece tokenizer and an ensemble that the local endpoint
serves from text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.config import load_config

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
runner = CliRunner()
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox", "##es"]


@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BertForSequenceClassification (1 layer, hidden 16, 3 labels) as save_pretrained writes
    it, with a WordPiece vocab.txt."""
    path = tmp_path_factory.mktemp("hf") / "bert"
    config = transformers.BertConfig(
        vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=32, num_labels=3,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).eval().save_pretrained(path)
    words = WORDS + [f"w{i}" for i in range(64 - len(WORDS))]
    (path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    (path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    return path


def test_export_matches_torch_with_dynamic_batch_and_sequence(hf_dir: Path, tmp_path: Path) -> None:
    import onnxruntime as ort

    out = tmp_path / "repo"
    result = runner.invoke(app, ["import", str(hf_dir), "--name", "bert", "--out", str(out)])
    assert result.exit_code == 0, result.output
    config = load_config(out / "bert" / "config.pbtxt")
    assert config.max_batch_size == 4 and config.HasField("dynamic_batching")
    assert {t.name: list(t.dims) for t in config.input} == {
        "input_ids": [-1], "attention_mask": [-1], "token_type_ids": [-1],
    }  # fmt: skip
    session = ort.InferenceSession(str(out / "bert" / "1" / "model.onnx"))
    model = transformers.BertForSequenceClassification.from_pretrained(hf_dir).eval()
    for batch, length in ((1, 3), (5, 11)):  # neither is the shape it was exported with
        ids = np.random.default_rng(batch).integers(0, 64, (batch, length))
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feeds["token_type_ids"] = np.zeros_like(ids)
        [logits] = session.run(["logits"], feeds)
        with torch.no_grad():
            expected = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}).logits.numpy()
        assert logits.shape == (batch, 3)
        assert np.abs(logits - expected).max() < 1e-4


@pytest.mark.e2e
def test_tokenizer_and_pipeline_serve_text(
    hf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    out, store = tmp_path / "repo", tmp_path / "store"
    args = ["import", str(hf_dir), "--name", "bert", "--out", str(out), "--tokenizer"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["bert", "bert_pipeline", "bert_tokenizer"]
    packaged = runner.invoke(app, ["package", str(out), "--release", f"file://{store}"])
    assert packaged.exit_code == 0, packaged.output
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    up = runner.invoke(app, ["local", "up", "--release", str(store), "--port", "0", "-d"])
    assert up.exit_code == 0, up.output
    try:
        text = ["invoke", "--target-model", "bert_pipeline-0", "--text", "The quick foxes."]
        answer = runner.invoke(app, [*text, "--json"])
        assert answer.exit_code == 0, answer.output
        assert json.loads(answer.stdout)["outputs"]["logits"]["shape"] == [1, 3]
    finally:
        down = runner.invoke(app, ["local", "down"])
    assert down.exit_code == 0, down.output


def test_a_directory_without_config_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", str(tmp_path / "src"), "--name", "m", "--out", str(out)])
    assert result.exit_code == 2 and "no config.json" in result.output
    assert not out.exists()


def test_wordpiece_splits_as_bert(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys
    import types

    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", types.ModuleType("stub"))
    tokenizer = importlib.import_module("packager.hf_tokenizer_model")
    vocab = {word: index for index, word in enumerate(WORDS)}
    words = tokenizer.basic_tokens("The Quick, FOXES!", lower=True)
    assert words == ["the", "quick", ",", "foxes", "!"]
    pieces = [p for w in words for p in tokenizer.wordpiece(w, vocab, "[UNK]")]
    assert pieces == ["the", "quick", "[UNK]", "fox", "##es", "[UNK]"]
