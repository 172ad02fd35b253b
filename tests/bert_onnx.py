"""A BERT-shaped ONNX classifier made in the tests (``onnx.helper``, random weights, no hub).

Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (INT64, dynamic batch and
sequence); word, position and token-type embedding tables read with ``Gather`` (the token-type
table has 2 rows, as BERT's); a masked mean over the sequence, one tanh layer and a classifier
head; output ``logits`` [batch, classes]. Shared by the import, validate, invoke and end-to-end
tests: ``write_bert_onnx(path)``, or the ``bert_onnx`` fixture (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, MAX_POSITIONS, TYPES, HIDDEN, CLASSES = 100, 64, 2, 8, 3
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


def _constants(rng: np.random.Generator) -> list[onnx.TensorProto]:
    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    return [
        _init("word_embeddings", weights(VOCAB, HIDDEN)),
        _init("position_embeddings", weights(MAX_POSITIONS, HIDDEN)),
        _init("token_type_embeddings", weights(TYPES, HIDDEN)),
        _init("pooler_weight", weights(HIDDEN, HIDDEN)),
        _init("pooler_bias", weights(HIDDEN)),
        _init("classifier_weight", weights(HIDDEN, CLASSES)),
        _init("classifier_bias", weights(CLASSES)),
        _init("zero", np.array([0], dtype=np.int64)),
        _init("one", np.array([1], dtype=np.int64)),
        _init("two", np.array([2], dtype=np.int64)),
        _init("axis1", np.array([1], dtype=np.int64)),
        _init("epsilon", np.array(1e-6, dtype=np.float32)),
    ]


def _nodes() -> list[onnx.NodeProto]:
    node = helper.make_node
    return [
        node("Gather", ["word_embeddings", "input_ids"], ["words"]),
        node("Gather", ["token_type_embeddings", "token_type_ids"], ["types"]),
        # positions 0 .. seq-1: the first rows of the position table
        node("Shape", ["input_ids"], ["ids_shape"]),
        node("Slice", ["ids_shape", "one", "two"], ["seq_len"]),
        node("Slice", ["position_embeddings", "zero", "seq_len", "zero"], ["positions"]),
        node("Add", ["words", "types"], ["words_types"]),
        node("Add", ["words_types", "positions"], ["embeddings"]),
        # masked mean over the sequence
        node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["mask_float", "two"], ["mask3"]),
        node("Mul", ["embeddings", "mask3"], ["masked"]),
        node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
        node("ReduceSum", ["mask_float", "axis1"], ["count"], keepdims=1),
        node("Max", ["count", "epsilon"], ["count_safe"]),
        node("Div", ["summed", "count_safe"], ["pooled"]),
        node("MatMul", ["pooled", "pooler_weight"], ["dense"]),
        node("Add", ["dense", "pooler_bias"], ["dense_bias"]),
        node("Tanh", ["dense_bias"], ["hidden"]),
        node("MatMul", ["hidden", "classifier_weight"], ["scores"]),
        node("Add", ["scores", "classifier_bias"], ["logits"]),
    ]


def bert_onnx_bytes(seed: int = 0) -> bytes:
    """The serialized model (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in INPUTS
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", CLASSES])
    graph = helper.make_graph(_nodes(), "bert_tiny", inputs, [output], _constants(rng))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime 1.18 and later read
    onnx.checker.check_model(model)
    return model.SerializeToString()


def write_bert_onnx(path: Path, seed: int = 0) -> Path:
    """Write the model to ``path`` (parents made); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bert_onnx_bytes(seed))
    return path
