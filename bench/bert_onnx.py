"""A small BERT-shaped ONNX classifier written directly with ``onnx.helper`` (no hub, no torch).

Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (INT64, dynamic batch and
sequence), output ``logits`` (FP32, [batch, 2]): word and token-type embeddings (Gather on
initializers: a 2-row token-type table, as BERT has), a tanh layer, a mask-weighted mean over
the sequence, a classifier. Deterministic (seeded weights). ``tdk build`` tests and
``bench/trt_check.py`` use it; the issue's fuller test model generator (helper h35a) can
replace it.

``encoder_model`` is a BERT encoder proper, for what the serving path costs beside the model
(``bench/invoke.py``'s front CPU against Triton's): ``layers`` blocks of multi-head
self-attention (masked softmax) and a GELU feed-forward, each with a residual and
LayerNormalization, then BERT's pooler (first token, dense, tanh) and a classifier; its
arithmetic per token is BERT's for the same layers and width (``EncoderShape``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class EncoderShape:
    """A BERT encoder's shape; the default is all-MiniLM-L6-v2's (6 layers, 384 wide, 12
    heads, feed-forward 1536), with a smaller vocabulary (it sets the size, not the work)."""

    layers: int = 6
    hidden: int = 384
    heads: int = 12
    vocab: int = 8192
    positions: int = 512

    @property
    def label(self) -> str:
        return f"BERT encoder L{self.layers} H{self.hidden} A{self.heads} V{self.vocab}"


class _Graph:
    """Nodes and seeded initializers of an ONNX graph under construction (names in, name out)."""

    def __init__(self, seed: int, hidden: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.hidden = hidden
        self.nodes: list[Any] = []
        self.init: list[Any] = []

    def weight(self, name: str, *dims: int) -> str:
        scale = 1.0 / np.sqrt(dims[0]) if len(dims) > 1 else 0.02
        return self.const(name, self.rng.standard_normal(dims) * scale, np.float32)

    def const(self, name: str, values: Any, dtype: Any) -> str:
        from onnx import numpy_helper

        self.init.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def dense(self, x: str, name: str, fan_in: int, fan_out: int) -> str:
        out = self.node("MatMul", [x, self.weight(f"{name}_w", fan_in, fan_out)], f"{name}_mm")
        return self.node("Add", [out, self.weight(f"{name}_b", fan_out)], name)

    def norm(self, x: str, name: str) -> str:
        scale = self.const(f"{name}_g", [1.0] * self.hidden, np.float32)
        bias = self.weight(f"{name}_b", self.hidden)
        return self.node("LayerNormalization", [x, scale, bias], name, axis=-1, epsilon=1e-12)

    def heads(self, x: str, name: str, perm: list[int]) -> str:
        split = self.node("Reshape", [x, "heads_shape"], f"{name}_split")
        return self.node("Transpose", [split], f"{name}_t", perm=perm)


def _block(g: _Graph, x: str, i: int) -> str:
    """One encoder layer: masked multi-head self-attention, then the GELU feed-forward."""
    h, n = g.hidden, g.node
    q = g.heads(g.dense(x, f"l{i}_q", h, h), f"l{i}_q", [0, 2, 1, 3])
    k = g.heads(g.dense(x, f"l{i}_k", h, h), f"l{i}_k", [0, 2, 3, 1])
    v = g.heads(g.dense(x, f"l{i}_v", h, h), f"l{i}_v", [0, 2, 1, 3])
    scores = n("Mul", [n("MatMul", [q, k], f"l{i}_qk"), "scale"], f"l{i}_scaled")
    probs = n("Softmax", [n("Add", [scores, "bias"], f"l{i}_masked")], f"l{i}_p", axis=-1)
    context = n("Transpose", [n("MatMul", [probs, v], f"l{i}_pv")], f"l{i}_c", perm=[0, 2, 1, 3])
    merged = n("Reshape", [context, "hidden_shape"], f"l{i}_merged")
    attended = g.norm(n("Add", [x, g.dense(merged, f"l{i}_o", h, h)], f"l{i}_res1"), f"l{i}_n1")
    inner = g.dense(attended, f"l{i}_ff1", h, 4 * h)
    erf = n("Erf", [n("Div", [inner, "sqrt2"], f"l{i}_ff_scaled")], f"l{i}_erf")
    gate = n("Mul", [n("Add", [erf, "one_f"], f"l{i}_erf1"), "half"], f"l{i}_gate")
    outer = g.dense(n("Mul", [inner, gate], f"l{i}_gelu"), f"l{i}_ff2", 4 * h, h)
    return g.norm(n("Add", [attended, outer], f"l{i}_res2"), f"l{i}_n2")


def _embedded(g: _Graph, shape: EncoderShape) -> str:
    """Word + token-type + position embeddings, normalised; also the attention mask's bias."""
    h, n = shape.hidden, g.node
    g.const("heads_shape", [0, 0, shape.heads, h // shape.heads], np.int64)
    g.const("hidden_shape", [0, 0, h], np.int64)
    g.const("scale", 1.0 / np.sqrt(h // shape.heads), np.float32)
    for name, value in (("half", 0.5), ("one_f", 1.0), ("sqrt2", np.sqrt(2.0)), ("neg", -1e4)):
        g.const(name, value, np.float32)
    for name, index in (("zero", 0), ("one", 1), ("two", 2)):
        g.const(name, [index], np.int64)
    seq = n("Slice", [n("Shape", ["input_ids"], "ids_shape"), "one", "two"], "seq_len")
    positions = n("Slice", [g.weight("pos_emb", shape.positions, h), "zero", seq, "zero"], "pos")
    words = n("Gather", [g.weight("word_emb", shape.vocab, h), "input_ids"], "words")
    types = n("Gather", [g.weight("type_emb", 2, h), "token_type_ids"], "types")
    summed = n("Add", [n("Add", [words, types], "words_types"), positions], "embedded")
    mask = n("Cast", ["attention_mask"], "mask_f", to=1)  # TensorProto.FLOAT
    mask4 = n("Unsqueeze", [mask, n("Concat", ["one", "two"], "axes12", axis=0)], "mask4")
    n("Mul", [n("Sub", ["one_f", mask4], "unmasked"), "neg"], "bias")
    return g.norm(summed, "emb_norm")


def encoder_model(shape: EncoderShape, seed: int = 0) -> bytes:
    """The serialized BERT encoder (opset 17: LayerNormalization), same I/O as ``bert_model``."""
    import onnx
    from onnx import TensorProto, helper

    g = _Graph(seed, shape.hidden)
    x = _embedded(g, shape)
    for i in range(shape.layers):
        x = _block(g, x, i)
    first = g.node("Gather", [x, "zero"], "first", axis=1)  # [batch, 1, hidden]
    cls = g.node("Squeeze", [first, "one"], "cls")
    pooled = g.node("Tanh", [g.dense(cls, "pool", shape.hidden, shape.hidden)], "pooled")
    g.dense(pooled, "logits", shape.hidden, LABELS)
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in INPUTS]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", LABELS])
    graph = helper.make_graph(g.nodes, "bert_encoder", ids, [output], g.init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def write_model_dir(
    repo: Path, name: str = "bert", max_batch: int = 32, shape: EncoderShape | None = None
) -> Path:
    """``repo/name/config.pbtxt`` and ``repo/name/1/model.onnx`` (``bert_model``, or the
    encoder of ``shape``); the model directory."""
    model = repo / name
    (model / "1").mkdir(parents=True, exist_ok=True)
    onnx_bytes = bert_model() if shape is None else encoder_model(shape)
    (model / "1" / "model.onnx").write_bytes(onnx_bytes)
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
