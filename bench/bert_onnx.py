"""A small BERT-shaped ONNX classifier written directly with ``onnx.helper`` (no hub, no torch).

Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (INT64, dynamic batch and
sequence), output ``logits`` (FP32, [batch, 2]): word and token-type embeddings (Gather on
initializers: a 2-row token-type table, as BERT has), a tanh layer, a mask-weighted mean over
the sequence, a classifier. Deterministic (seeded weights). ``tdk build`` tests and
``bench/trt_check.py`` use it; the issue's fuller test model generator (helper h35a) can
replace it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

VOCAB = 64
HIDDEN = 16
LABELS = 2
INPUTS = ("input_ids", "attention_mask", "token_type_ids")

CONFIG = """name: "{name}"
backend: "onnxruntime"
max_batch_size: {max_batch}
input [
  {{ name: "input_ids" data_type: TYPE_INT64 dims: [ -1 ] }},
  {{ name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] }},
  {{ name: "token_type_ids" data_type: TYPE_INT64 dims: [ -1 ] }}
]
output [ {{ name: "logits" data_type: TYPE_FP32 dims: [ {labels} ] }} ]
dynamic_batching {{ }}
"""


def bert_model(seed: int = 0) -> bytes:
    """The serialized ONNX model (opset 17)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32), name)

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in INPUTS]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", LABELS])
    nodes = [
        helper.make_node("Gather", ["word_emb", "input_ids"], ["words"]),
        helper.make_node("Gather", ["type_emb", "token_type_ids"], ["types"]),
        helper.make_node("Add", ["words", "types"], ["embedded"]),
        helper.make_node("MatMul", ["embedded", "dense_w"], ["dense"]),
        helper.make_node("Tanh", ["dense"], ["hidden"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "axis_last"], ["mask3"]),
        helper.make_node("Mul", ["hidden", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis_seq"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask", "axis_seq"], ["count"], keepdims=1),
        helper.make_node("Max", ["count", "one"], ["safe_count"]),
        helper.make_node("Div", ["summed", "safe_count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "cls_w"], ["scores"]),
        helper.make_node("Add", ["scores", "cls_b"], ["logits"]),
    ]
    initializers = [
        weight("word_emb", VOCAB, HIDDEN),
        weight("type_emb", 2, HIDDEN),
        weight("dense_w", HIDDEN, HIDDEN),
        weight("cls_w", HIDDEN, LABELS),
        weight("cls_b", LABELS),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis_last"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_seq"),
        numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one"),
    ]
    graph = helper.make_graph(nodes, "bert_tiny", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def write_model_dir(repo: Path, name: str = "bert", max_batch: int = 32) -> Path:
    """``repo/name/config.pbtxt`` and ``repo/name/1/model.onnx``; the model directory."""
    model = repo / name
    (model / "1").mkdir(parents=True, exist_ok=True)
    (model / "1" / "model.onnx").write_bytes(bert_model())
    (model / "config.pbtxt").write_text(
        CONFIG.format(name=name, max_batch=max_batch, labels=LABELS)
    )
    return model


def main(argv: list[str]) -> int:
    """``python bench/bert_onnx.py REPO``: write the model directory; print one JSON line."""
    import hashlib
    import json

    paths = [arg for arg in argv if not arg.startswith("--")]  # --json: always JSON
    model = write_model_dir(Path(paths[0]) if paths else Path("bert-repo"))
    onnx_bytes = (model / "1" / "model.onnx").read_bytes()
    summary = {
        "model": str(model),
        "inputs": list(INPUTS),
        "outputs": ["logits"],
        "sha256": hashlib.sha256(onnx_bytes).hexdigest(),
        "bytes": len(onnx_bytes),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
