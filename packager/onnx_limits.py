"""How long a dynamic dimension an ONNX graph can take: the size of the table it slices.

A BERT-shaped model adds position embeddings to its tokens by slicing a constant table
(the embeddings themselves, or a ``position_ids`` buffer) up to the sequence length, which
the graph reads from its input's shape (``Shape`` -> ``Gather``/``Slice`` -> ``Slice`` ends).
A longer sequence than the table's rows cannot broadcast: ONNX Runtime fails at run time and
a TensorRT profile built for it fails to build. ``dim_limits`` finds those tables, so `tdk
build` refuses such a ``--shape`` before anything is written.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from packager.onnx_signature import _constant_shapes, graph_inputs
from tdk.errors import ConfigError

#: ops whose first input's value reaches their output unchanged in meaning (a dim stays a dim)
_SAME_VALUE = frozenset({"Unsqueeze", "Squeeze", "Cast", "Reshape", "Identity", "Flatten"})
_INT_TYPES = {6: np.int32, 7: np.int64}  # TensorProto.INT32, INT64


@dataclass(frozen=True)
class DimLimit:
    """Input ``name``'s dimension ``axis`` (batch included) takes at most ``most``: the rows
    of ``table``, which the graph slices up to it."""

    name: str
    axis: int
    most: int
    table: str


def _ints(tensor: Any) -> list[int] | None:
    """The values of a small integer TensorProto, None for anything else."""
    kind = _INT_TYPES.get(int(tensor.data_type))
    if kind is None:
        return None
    if tensor.raw_data:
        values = np.frombuffer(tensor.raw_data, dtype=np.dtype(kind).newbyteorder("<"))
        found = [int(v) for v in values]
    else:
        found = [int(v) for v in (tensor.int64_data if kind is np.int64 else tensor.int32_data)]
    return found if 0 < len(found) <= 8 else None


def _constant_ints(graph: Any) -> dict[str, list[int]]:
    values = {init.name: v for init in graph.initializer if (v := _ints(init)) is not None}
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for attribute in node.attribute:
                if attribute.name == "value" and (v := _ints(attribute.t)) is not None:
                    values[node.output[0]] = v
    return values


def _shape_dims(
    graph: Any, consumers: dict[str, list[tuple[Any, int]]]
) -> tuple[dict[str, tuple[str, int]], dict[str, list[int]]]:
    """Tensor -> (input name, axis) for each tensor holding one dimension of an input; and
    the graph's small integer constants."""
    values = _constant_ints(graph)
    found: dict[str, tuple[str, int]] = {}
    for tensor in graph_inputs(graph):
        for shape, _ in consumers.get(tensor.name, []):
            if shape.op_type != "Shape":
                continue
            start = next((int(a.i) for a in shape.attribute if a.name == "start"), 0)
            for node, position in consumers.get(shape.output[0], []):
                picked = values.get(node.input[1]) if len(node.input) > 1 else None
                if position != 0 or picked is None or len(picked) != 1 or picked[0] < 0:
                    continue
                one = node.op_type == "Gather" or (
                    node.op_type == "Slice" and values.get(node.input[2], [0])[0] == picked[0] + 1
                )
                if one:  # shape[i], or shape[i:i+1]
                    found[node.output[0]] = (tensor.name, start + picked[0])
    return found, values


def dim_limits(graph: Any) -> list[DimLimit]:
    """Each input dimension the graph slices a constant table with, and the table's size
    along the sliced axis (the smallest such table per dimension)."""
    consumers: dict[str, list[tuple[Any, int]]] = {}
    for node in graph.node:
        for position, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, position))
    dims, values = _shape_dims(graph, consumers)
    tables = _constant_shapes(graph)
    limits: dict[tuple[str, int], DimLimit] = {}
    todo = deque(dims)
    while todo:
        tensor = todo.popleft()
        name, axis = dims[tensor]
        for node, position in consumers.get(tensor, []):
            if node.op_type in _SAME_VALUE and position == 0 and node.output[0] not in dims:
                dims[node.output[0]] = (name, axis)
                todo.append(node.output[0])
            elif node.op_type == "Slice" and position == 2:
                limit = _sliced_size(node, tables, values)
                key = (name, axis)
                if limit is not None and (key not in limits or limit < limits[key].most):
                    limits[key] = DimLimit(name, axis, limit, node.input[0])
    return sorted(limits.values(), key=lambda limit: (limit.name, limit.axis))


def _sliced_size(
    node: Any, tables: dict[str, tuple[int, ...]], values: dict[str, list[int]]
) -> int | None:
    """The size of the constant table ``node`` (a Slice) cuts, along the axis it cuts."""
    shape = tables.get(node.input[0])
    if not shape:
        return None
    axes = values.get(node.input[3]) if len(node.input) > 3 and node.input[3] else [0]
    if axes is None or len(axes) != 1 or not -len(shape) <= axes[0] < len(shape):
        return None
    size = shape[axes[0]]
    return size if size > 0 else None


def model_longest(model_path: Path, config: Any) -> dict[str, tuple[int, ...]]:
    """Input name -> the longest each of its config ``dims`` may be (-1: unbounded), for the
    inputs whose ONNX graph bounds a dimension; empty for other backends or unreadable files."""
    from packager.config import backend_of
    from packager.onnx_signature import onnx_file, read_graph

    if backend_of(config) != "onnxruntime":
        return {}
    filename = str(config.default_model_filename) or "model.onnx"
    versions = sorted(
        (p.name for p in model_path.iterdir() if p.is_dir() and p.name.isdigit()), key=int
    )
    path = next((f for v in reversed(versions) if (f := onnx_file(model_path, v, filename))), None)
    if path is None:
        return {}
    try:
        limits = dim_limits(read_graph(path))
    except ConfigError:
        return {}
    batch = 1 if config.max_batch_size > 0 else 0  # Triton's dims leave the batch axis out
    found: dict[str, list[int]] = {}
    for tensor in config.input:
        for limit in limits:
            axis = limit.axis - batch
            if limit.name == tensor.name and 0 <= axis < len(tensor.dims):
                found.setdefault(tensor.name, [-1] * len(tensor.dims))[axis] = limit.most
    return {name: tuple(dims) for name, dims in found.items()}
