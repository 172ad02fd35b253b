"""Build small Triton repositories for validate tests: config text as users write it, ONNX
graphs made with ``onnx.helper`` (no downloads), placeholder files for other backends."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ONNX_TYPES = {"FP32": TensorProto.FLOAT, "INT32": TensorProto.INT32, "INT64": TensorProto.INT64,
              "BOOL": TensorProto.BOOL, "UINT64": TensorProto.UINT64}  # fmt: skip
Tensor = tuple[str, str, Sequence[int | str]]  # name, Triton dtype, dims (str = symbolic)


def onnx_model(inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> bytes:
    """A graph whose outputs are Identity copies of the first input of the same dtype."""

    def value(t: Tensor) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(t[0], ONNX_TYPES[t[1]], list(t[2]))

    nodes = []
    for out in outputs:
        source = next((i for i in inputs if i[1] == out[1]), inputs[0])
        nodes.append(helper.make_node("Identity", [source[0]], [out[0]]))
    graph = helper.make_graph(nodes, "g", [value(i) for i in inputs], [value(o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def make_repo(root: Path, models: Mapping[str, tuple[str, Mapping[str, bytes | str]]]) -> Path:
    """``models``: name -> (config.pbtxt text, {relative path: content}) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, (config, files) in models.items():
        model = root / name
        model.mkdir()
        (model / "config.pbtxt").write_text(textwrap.dedent(config).lstrip(), encoding="utf-8")
        for rel, content in files.items():
            path = model / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
    return root


PYTHON_MODEL = "class TritonPythonModel:\n    def execute(self, requests):\n        return []\n"


def structured_onnx(
    kind: str, source: Tensor = ("x", "FP32", ["b", 4]), result: Tensor = ("y", "FP32", ["b", 4])
) -> bytes:
    """``source`` -> ``result`` through a graph of ``kind``: ``if`` (well formed: a constant
    condition, both branches an Identity), ``if-without-else``, ``if-branch-not-graph``,
    ``nested-if-without-else`` (inside a branch), ``loop-without-body``, ``cycle``."""
    x, y = source[0], result[0]
    branch = helper.make_graph(
        [helper.make_node("Identity", [x], ["z"])], "branch", [],
        [helper.make_tensor_value_info("z", ONNX_TYPES[result[1]], list(result[2]))],
    )  # fmt: skip
    cond = helper.make_node(
        "Constant", [], ["cond"], value=helper.make_tensor("c", TensorProto.BOOL, [], [True])
    )
    nodes = {
        "if": [helper.make_node("If", ["cond"], [y], then_branch=branch, else_branch=branch)],
        "if-without-else": [helper.make_node("If", ["cond"], [y], then_branch=branch)],
        "if-branch-not-graph": [
            helper.make_node("If", ["cond"], [y], then_branch=3, else_branch=branch)
        ],
        "loop-without-body": [helper.make_node("Loop", ["", "cond"], [y])],
        "cycle": [
            helper.make_node("Add", [x, "c2"], ["a"]),
            helper.make_node("Relu", ["a"], ["c2"]),
            helper.make_node("Identity", ["a"], [y]),
        ],
    }
    inner = helper.make_graph(
        [cond, helper.make_node("If", ["cond"], ["z"], then_branch=branch)], "outer-branch", [],
        [helper.make_tensor_value_info("z", ONNX_TYPES[result[1]], list(result[2]))],
    )  # fmt: skip
    nodes["nested-if-without-else"] = [
        helper.make_node("If", ["cond"], [y], then_branch=inner, else_branch=branch)
    ]
    graph = helper.make_graph(
        [cond, *nodes[kind]], "g",
        [helper.make_tensor_value_info(x, ONNX_TYPES[source[1]], list(source[2]))],
        [helper.make_tensor_value_info(y, ONNX_TYPES[result[1]], list(result[2]))],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()
