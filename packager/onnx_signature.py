"""What an ONNX graph tells about serving it: the config Triton's ONNX Runtime backend completes
for a model directory without ``config.pbtxt``, and the values each integer input accepts.

The completion follows the backend's ``ModelState::AutoCompleteConfig`` /
``AutoCompleteMaxBatch`` / ``AutoCompleteIO`` (src/onnxruntime.cc of
github.com/triton-inference-server/onnxruntime_backend, read 2026-11-27):

- a model whose every input and output has a variable first dimension can batch: its
  ``max_batch_size`` becomes the server's ``--backend-config=default-max-batch-size`` (4 unless
  set: docs/user_guide/model_configuration.md, "Default Max Batch Size and Dynamic Batcher", of
  github.com/triton-inference-server/server, read 2026-11-27), and a ``max_batch_size`` above 1
  with no scheduler turns ``dynamic_batching`` on;
- inputs and outputs take the graph's names and element types; ``dims`` drop the first (batch)
  dimension when batching, a variable dimension is -1, and a tensor left with no dimension
  gets ``dims: [1]`` (with ``reshape: {shape: []}`` when batching).

Read with the generated protobuf module (``import onnx`` costs 50 ms); weights stay on disk.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.config import backend_of, datatype_value, new_config
from packager.protos import generated_module
from tdk.errors import ConfigError

#: Triton's default for ``--backend-config=default-max-batch-size`` (see the module docstring)
DEFAULT_MAX_BATCH_SIZE = 4
# onnx.TensorProto.DataType -> Triton's name
ONNX_TYPES = {
    1: "FP32", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64",
    8: "BYTES", 9: "BOOL", 10: "FP16", 11: "FP64", 12: "UINT32", 13: "UINT64", 16: "BF16",
}  # fmt: skip
INTEGER_TYPES = frozenset(
    {"UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "UINT32", "UINT64"}
)
# ops whose first input reaches their output with the same values (shape or type changed)
_PASS_THROUGH = frozenset(
    {"Cast", "Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Expand", "Transpose"}
)


@dataclass(frozen=True)
class Tensor:
    """One graph input or output: Triton dtype (None when ONNX's has no Triton name) and dims
    as ONNX Runtime reports them (-1 for a variable or symbolic dimension)."""

    name: str
    datatype: str | None
    dims: tuple[int, ...] | None  # None: rank unknown


def read_graph(path: Path, data: bytes | None = None) -> Any:
    """The ``GraphProto`` of the ONNX file at ``path`` (``data``: its bytes, when read already);
    ConfigError when it is not one."""
    onnx_ml = generated_module("onnx.onnx_ml_pb2", "onnx")
    hint = "re-export the model with onnx.save / torch.onnx.export"
    try:
        model = onnx_ml.ModelProto.FromString(path.read_bytes() if data is None else data)
    except Exception as exc:  # the protobuf decoder raises several unrelated types
        raise ConfigError(
            f"{path}: cannot be read as an ONNX model ({exc.__class__.__name__}: {exc})",
            hint=hint,
        ) from exc
    missing = _not_a_model(model)
    if missing:  # a few stray bytes decode as an empty protobuf message
        raise ConfigError(f"{path}: not an ONNX model ({missing})", hint=hint)
    return model.graph


def _not_a_model(model: Any) -> str:
    """What a decoded ``ModelProto`` lacks to be a model ONNX Runtime loads, "" if nothing:
    an ir_version, an opset import from IR 3 on (onnx 1.23's ``onnx/checker.py``,
    ``check_model``, checked 2026-12-07), a graph with at least one output."""
    if model.ir_version <= 0:
        return "no ir_version"
    if model.ir_version >= 3 and not model.opset_import:
        return "no opset_import"
    if not model.HasField("graph") or not model.graph.output:
        return "no graph with an output"
    return ""


def _tensor(value: Any) -> Tensor:
    tensor_type = value.type.tensor_type
    dims: tuple[int, ...] | None = None
    if tensor_type.HasField("shape"):
        dims = tuple(
            int(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else -1
            for d in tensor_type.shape.dim
        )
    return Tensor(value.name, ONNX_TYPES.get(tensor_type.elem_type), dims)


def graph_inputs(graph: Any) -> list[Tensor]:
    """The inputs a caller feeds: graph inputs that are not initializers (as ORT lists them)."""
    initializers = {init.name for init in graph.initializer}
    return [_tensor(v) for v in graph.input if v.name not in initializers]


def graph_outputs(graph: Any) -> list[Tensor]:
    return [_tensor(v) for v in graph.output]


def can_batch(tensors: list[Tensor]) -> bool:
    """AutoCompleteMaxBatch: every tensor has a first dimension, and it is variable."""
    return all(t.dims and t.dims[0] == -1 for t in tensors)


def completed_config(
    graph: Any, name: str, default_max_batch_size: int = DEFAULT_MAX_BATCH_SIZE
) -> Any:
    """The ``ModelConfig`` Triton's ONNX Runtime backend completes for ``graph`` (model ``name``,
    no config.pbtxt); ConfigError for an element type Triton has no name for."""
    inputs, outputs = graph_inputs(graph), graph_outputs(graph)
    config = new_config()
    config.name = name
    config.backend = "onnxruntime"
    config.platform = "onnxruntime_onnx"
    config.default_model_filename = "model.onnx"
    if can_batch(inputs + outputs):
        config.max_batch_size = max(default_max_batch_size, 0)
        if config.max_batch_size > 1:
            config.dynamic_batching.SetInParent()
    for kind, tensors, declared in (
        ("input", inputs, config.input),
        ("output", outputs, config.output),
    ):
        for tensor in tensors:
            _declare(declared.add(), tensor, kind, int(config.max_batch_size))
    return config


def _declare(entry: Any, tensor: Tensor, kind: str, max_batch_size: int) -> None:
    if tensor.datatype is None:
        raise ConfigError(
            f"ONNX {kind} {tensor.name!r} has an element type Triton cannot serve",
            hint="export the model with a numeric, bool or string type for it",
        )
    datatype = tensor.datatype
    entry.name = tensor.name
    entry.data_type = datatype_value(datatype)
    dims = list(tensor.dims or ())
    dims = dims[1:] if max_batch_size > 0 else dims
    if not dims:
        dims = [1]
        if max_batch_size > 0:
            entry.reshape.SetInParent()  # an empty reshape: the model takes [batch]
    entry.dims.extend(dims)


def input_ranges(graph: Any) -> dict[str, tuple[int, int]]:
    """Inclusive (low, high) of the integer inputs whose values the graph bounds: an input that
    reaches a ``Gather``'s indices (through casts and reshapes) indexes that table's rows, so it
    takes 0 .. rows-1; an integer or bool input named ``*mask`` takes 0 or 1."""
    tables = _constant_shapes(graph)
    consumers: dict[str, list[tuple[Any, int]]] = {}
    for node in graph.node:
        for position, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, position))
    ranges: dict[str, tuple[int, int]] = {}
    for tensor in graph_inputs(graph):
        if tensor.datatype not in INTEGER_TYPES and tensor.datatype != "BOOL":
            continue
        rows = _gathered_rows(tensor.name, consumers, tables)
        if rows:
            ranges[tensor.name] = (0, min(rows) - 1)
        elif tensor.name.lower().endswith("mask"):
            ranges[tensor.name] = (0, 1)
    return ranges


def _constant_shapes(graph: Any) -> dict[str, tuple[int, ...]]:
    """Shapes of the graph's constant tensors: initializers and ``Constant`` node outputs."""
    shapes = {init.name: tuple(int(d) for d in init.dims) for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value" and node.output:
                    shapes[node.output[0]] = tuple(int(d) for d in attribute.t.dims)
    return shapes


def _gathered_rows(
    name: str, consumers: dict[str, list[tuple[Any, int]]], tables: dict[str, tuple[int, ...]]
) -> list[int]:
    """The sizes of the table axes ``name``'s values index, following pass-through ops."""
    rows: list[int] = []
    seen = {name}
    todo = deque([name])
    while todo:
        for node, position in consumers.get(todo.popleft(), []):
            if node.op_type == "Gather" and position == 1:
                shape = tables.get(node.input[0])
                axis = next((int(a.i) for a in node.attribute if a.name == "axis"), 0)
                if shape and -len(shape) <= axis < len(shape) and shape[axis] > 0:
                    rows.append(shape[axis])
            elif node.op_type in _PASS_THROUGH and position == 0:
                for output in node.output:
                    if output not in seen:
                        seen.add(output)
                        todo.append(output)
    return rows


def onnx_file(model_path: Path, version: str, filename: str = "model.onnx") -> Path | None:
    """The ONNX file of ``version`` (the file, or ``model.onnx`` inside a directory of that
    name, as the backend accepts both), None when absent or empty."""
    path = model_path / version / filename
    if path.is_dir():
        path = path / "model.onnx"
    return path if path.is_file() and path.stat().st_size > 0 else None


def model_input_ranges(model_path: Path, config: Any) -> dict[str, tuple[int, int]]:
    """``input_ranges`` of the ONNX file the served version of an ``onnxruntime`` model loads;
    empty for other backends or a file that cannot be read (validate reports that)."""
    if backend_of(config) != "onnxruntime":
        return {}
    filename = str(config.default_model_filename) or "model.onnx"
    versions = [p.name for p in model_path.iterdir() if p.is_dir() and p.name.isdigit()]
    for version in sorted(versions, key=int, reverse=True):
        path = onnx_file(model_path, version, filename)
        if path is not None:
            try:
                return input_ranges(read_graph(path))
            except ConfigError:
                return {}
    return {}
