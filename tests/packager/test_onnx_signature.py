"""The config Triton's ONNX Runtime backend completes, and the values integer inputs accept,
read from ONNX graphs made in the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from packager.config import datatype_name
from packager.onnx_signature import completed_config, input_ranges, read_graph
from tests.validate.helpers import onnx_model


def _graph(data: bytes) -> object:
    from packager.protos import generated_module

    return generated_module("onnx.onnx_ml_pb2", "onnx").ModelProto.FromString(data).graph


def test_bert_completes_with_batching_and_dynamic_batcher(bert_onnx: Path) -> None:
    config = completed_config(read_graph(bert_onnx), "bert")
    assert (config.backend, config.platform, config.max_batch_size) == (
        "onnxruntime", "onnxruntime_onnx", 4,
    )  # fmt: skip
    assert config.HasField("dynamic_batching")
    inputs = {t.name: (datatype_name(t.data_type), list(t.dims)) for t in config.input}
    assert inputs == {n: ("INT64", [-1]) for n in ("input_ids", "attention_mask", "token_type_ids")}
    [logits] = config.output
    assert (logits.name, datatype_name(logits.data_type), list(logits.dims)) == (
        "logits", "FP32", [3],
    )  # fmt: skip


def test_a_fixed_first_dimension_means_no_batching() -> None:
    graph = _graph(onnx_model([("x", "FP32", [4, 3])], [("y", "FP32", ["b", 3])]))
    config = completed_config(graph, "m")
    assert config.max_batch_size == 0 and not config.HasField("dynamic_batching")
    assert [list(t.dims) for t in config.input] == [[4, 3]]  # the batch stays in dims
    assert [list(t.dims) for t in config.output] == [[-1, 3]]


def test_a_batch_only_tensor_gets_dims_1_and_an_empty_reshape() -> None:
    graph = _graph(onnx_model([("x", "FP32", ["b"])], [("y", "FP32", ["b"])]))
    config = completed_config(graph, "m", default_max_batch_size=1)
    assert config.max_batch_size == 1 and not config.HasField("dynamic_batching")  # 1: no batcher
    assert list(config.input[0].dims) == [1] and config.input[0].HasField("reshape")
    assert list(config.input[0].reshape.shape) == []


def test_ranges_follow_gathers_through_casts_and_name_masks(bert_onnx: Path) -> None:
    assert input_ranges(read_graph(bert_onnx)) == {
        "input_ids": (0, 99), "attention_mask": (0, 1), "token_type_ids": (0, 1),
    }  # fmt: skip
    table = numpy_helper.from_array(np.zeros((7, 2), "float32"), "table")
    nodes = [
        helper.make_node("Cast", ["ids"], ["ids32"], to=TensorProto.INT32),
        helper.make_node("Unsqueeze", ["ids32", "axes"], ["ids3"]),
        helper.make_node("Gather", ["table", "ids3"], ["out"]),
    ]
    axes = numpy_helper.from_array(np.array([2], "int64"), "axes")
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["b", "s"]),
         helper.make_tensor_value_info("scale", TensorProto.INT64, ["b", 1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [table, axes],
    )  # fmt: skip
    assert input_ranges(graph) == {"ids": (0, 6)}  # "scale" indexes nothing: no range
