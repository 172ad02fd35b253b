"""The sample repository: deterministic bytes, Triton-parseable configs, ONNX graphs that run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from packager.config import datatype_name, load_config

ROOT = Path(__file__).resolve().parents[2]
MODELS = ("image_classifier", "text_classifier", "text_pipeline", "tokenizer")


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` -> its bytes (None for directories)."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _io(config: Any) -> dict[str, list[tuple[str, str, list[int]]]]:
    def spec(tensors: Any) -> list[tuple[str, str, list[int]]]:
        return [(t.name, datatype_name(t.data_type), list(t.dims)) for t in tensors]

    return {"inputs": spec(config.input), "outputs": spec(config.output)}


def _session(repo: Path, model: str) -> ort.InferenceSession:
    path = str(repo / model / "1" / "model.onnx")
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def _tokenizer(repo: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Import the generated tokenizer model.py with a minimal stand-in for Triton's utils."""
    utils = ModuleType("triton_python_backend_utils")
    utils.get_input_tensor_by_name = lambda request, name: request[name]  # type: ignore[attr-defined]
    utils.Tensor = lambda name, array: (name, array)  # type: ignore[attr-defined]
    utils.InferenceResponse = lambda output_tensors: dict(output_tensors)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", utils)
    import importlib.util

    spec = importlib.util.spec_from_file_location("tdk_tokenizer", repo / "tokenizer/1/model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generate_writes_one_repository_with_four_models(
    sample_repo: Path, model_repos_generate: ModuleType, tmp_path: Path
) -> None:
    files = model_repos_generate.generate(tmp_path / "repo")
    relative = [str(p.relative_to(tmp_path / "repo")) for p in files]
    assert relative == [
        "image_classifier/1/model.onnx",
        "image_classifier/config.pbtxt",
        "text_classifier/1/model.onnx",
        "text_classifier/config.pbtxt",
        "text_pipeline/config.pbtxt",
        "tokenizer/1/model.py",
        "tokenizer/config.pbtxt",
    ]
    assert sorted(p.name for p in sample_repo.iterdir()) == list(MODELS)
    assert (sample_repo / "text_pipeline" / "1").is_dir()  # ensembles need a version directory


def test_generate_is_byte_identical_and_replaces_stale_files(
    model_repos_generate: ModuleType, tmp_path: Path
) -> None:
    model_repos_generate.generate(tmp_path / "a")
    stale = tmp_path / "b" / "tokenizer" / "2" / "old.bin"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left over")
    model_repos_generate.generate(tmp_path / "b")
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert first == second
    assert not stale.exists()


def test_configs_declare_the_documented_signatures(sample_repo: Path) -> None:
    configs = {m: load_config(sample_repo / m / "config.pbtxt") for m in MODELS}
    assert {m: c.name for m, c in configs.items()} == {m: m for m in MODELS}
    text = configs["text_classifier"]
    assert _io(text) == {
        "inputs": [("token_ids", "INT32", [128]), ("attn_mask", "INT32", [128])],
        "outputs": [("output", "FP32", [128, 32]), ("pooled_output", "FP32", [32])],
    }
    assert text.max_batch_size == 8 and text.HasField("dynamic_batching")
    image = configs["image_classifier"]
    assert _io(image) == {
        "inputs": [("input", "FP32", [3, 224, 224])],
        "outputs": [("logits", "FP32", [11])],
    }
    assert image.max_batch_size == 16
    assert _io(configs["tokenizer"])["inputs"] == [("text", "BYTES", [1])]
    assert configs["tokenizer"].backend == "python"
    pipeline = configs["text_pipeline"]
    assert pipeline.platform == "ensemble"
    assert [s.model_name for s in pipeline.ensemble_scheduling.step] == [
        "tokenizer",
        "text_classifier",
    ]
    assert _io(pipeline)["outputs"] == _io(text)["outputs"]


def test_onnx_graphs_match_their_configs(sample_repo: Path) -> None:
    for model in ("text_classifier", "image_classifier"):
        graph = onnx.load(str(sample_repo / model / "1" / "model.onnx")).graph
        config = load_config(sample_repo / model / "config.pbtxt")
        for tensors, declared in ((graph.input, config.input), (graph.output, config.output)):
            shapes = {
                t.name: [d.dim_param or d.dim_value for d in t.type.tensor_type.shape.dim]
                for t in tensors
            }
            assert shapes == {t.name: ["batch", *t.dims] for t in declared}


def test_text_classifier_masks_padding_and_batches(sample_repo: Path) -> None:
    session = _session(sample_repo, "text_classifier")
    for batch in (1, 8):
        ids = np.zeros((batch, 128), np.int32)
        mask = np.zeros((batch, 128), np.int32)
        ids[:, :4], mask[:, :4] = [1, 5, 9, 700], 1
        output, pooled = session.run(None, {"token_ids": ids, "attn_mask": mask})
        assert output.shape == (batch, 128, 32) and pooled.shape == (batch, 32)
        assert np.all(output[:, 4:] == 0) and np.any(output[:, :4] != 0)
        assert np.all(np.abs(pooled) < 1)
    changed = ids.copy()
    changed[0, 2] = 3
    _, other = session.run(None, {"token_ids": changed, "attn_mask": mask})
    assert not np.allclose(other[0], pooled[0]) and np.allclose(other[1], pooled[1])


def test_image_classifier_gives_eleven_logits(sample_repo: Path) -> None:
    images = np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float32)
    (logits,) = _session(sample_repo, "image_classifier").run(None, {"input": images})
    assert logits.shape == (2, 11) and logits.dtype == np.float32
    assert not np.allclose(logits[0], logits[1])


def test_tokenizer_pads_truncates_and_feeds_the_classifier(
    sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokenizer = _tokenizer(sample_repo, monkeypatch)
    ids, mask = tokenizer.tokenize("Hello, Triton world!")
    assert ids.dtype == np.int32 and ids.shape == (128,)
    assert ids[0] == tokenizer.CLS_ID and mask.tolist() == [1] * 4 + [0] * 124
    assert np.array_equal(ids, tokenizer.tokenize("hello triton WORLD")[0])
    long_ids, long_mask = tokenizer.tokenize(" ".join(["word"] * 500))
    assert long_mask.sum() == 128 and int(long_ids.max()) < tokenizer.VOCAB_SIZE
    text = np.array([[b"first request"], [b"second one here"]], dtype=object)
    (response,) = tokenizer.TritonPythonModel().execute(
        [{"text": SimpleNamespace(as_numpy=lambda: text)}]
    )
    assert response["token_ids"].shape == (2, 128) and response["attn_mask"].sum() == 3 + 4
    feeds = {"token_ids": response["token_ids"], "attn_mask": response["attn_mask"]}
    _, pooled = _session(sample_repo, "text_classifier").run(None, feeds)
    assert pooled.shape == (2, 32)


def test_script_writes_the_repository(tmp_path: Path) -> None:
    script = ROOT / "model_repos" / "generate.py"
    result = subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "text_pipeline" / "config.pbtxt").is_file()
