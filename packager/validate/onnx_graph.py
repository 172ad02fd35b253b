"""ONNX file rules: the graph's inputs and outputs against the config (names, element types,
ranks, batch dimension), read with the ``onnx`` package, weights left on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packager.config import datatype_name
from packager.repository import ModelDir
from packager.validate.findings import WILDCARD, Sink
from packager.validate.layout import expected_file, served_versions

# onnx.TensorProto.DataType -> Triton's name
ONNX_TYPES = {
    1: "FP32",
    2: "UINT8",
    3: "INT8",
    4: "UINT16",
    5: "INT16",
    6: "INT32",
    7: "INT64",
    8: "BYTES",
    9: "BOOL",
    10: "FP16",
    11: "FP64",
    12: "UINT32",
    13: "UINT64",
    16: "BF16",
}


def check_onnx(model: ModelDir, sink: Sink) -> None:
    """Compare every served version's ONNX graph with the config."""
    if model.backend != "onnxruntime":
        return
    expected = expected_file(model)
    if expected is None:
        return
    for version in served_versions(model):
        path = model.path / version / expected
        if path.is_dir():
            path = path / "model.onnx"  # directory form: model.onnx/model.onnx + external data
        if path.is_file():
            graph = _load_graph(path, sink)
            if graph is not None:
                _compare(model.config, graph, path, sink)


def _load_graph(path: Path, sink: Sink) -> Any:
    import onnx  # imported here: `tdk validate` on non-ONNX repositories stays fast

    try:
        return onnx.load(str(path), load_external_data=False).graph
    except Exception as exc:  # the protobuf decoder raises several unrelated types
        sink.error(
            "model file",
            f"cannot be read as an ONNX model ({exc.__class__.__name__}: {exc})",
            "re-export the model with onnx.save / torch.onnx.export",
            file=path,
        )
        return None


def _graph_tensors(values: Any, exclude: set[str]) -> dict[str, tuple[str | None, list[Any]]]:
    """name -> (Triton dtype, dims) where a dim is an int, a symbol (str) or None (unknown)."""
    found: dict[str, tuple[str | None, list[Any]]] = {}
    for value in values:
        if value.name in exclude:
            continue
        tensor_type = value.type.tensor_type
        dims: list[Any] = []
        if tensor_type.HasField("shape"):
            for dim in tensor_type.shape.dim:
                if dim.HasField("dim_value") and dim.dim_value > 0:
                    dims.append(int(dim.dim_value))
                else:
                    dims.append(dim.dim_param or None)
        else:
            dims = [...]  # rank unknown
        found[value.name] = (ONNX_TYPES.get(tensor_type.elem_type), dims)
    return found


def _compare(config: Any, graph: Any, path: Path, sink: Sink) -> None:
    initializers = {init.name for init in graph.initializer}
    graph_inputs = _graph_tensors(graph.input, initializers)
    graph_outputs = _graph_tensors(graph.output, set())
    for kind, declared, actual in (
        ("input", config.input, graph_inputs),
        ("output", config.output, graph_outputs),
    ):
        for index, tensor in enumerate(declared):
            field = f"{kind}[{index}] ({tensor.name})"
            if tensor.name not in actual:
                sink.error(
                    field + ".name",
                    f"the ONNX graph in {path} has no {kind} {tensor.name!r}",
                    f"rename it to one of the graph's {kind}s: {sorted(actual)}",
                )
                continue
            _compare_tensor(config.max_batch_size, tensor, actual[tensor.name], field, sink)
    declared_inputs = {t.name for t in config.input}
    for name in sorted(set(graph_inputs) - declared_inputs):
        sink.error(
            "input",
            f"the ONNX graph in {path} needs input {name!r}, which the config does not declare",
            f"add an input named {name!r} to config.pbtxt",
        )


def _compare_tensor(
    max_batch_size: int, tensor: Any, actual: tuple[str | None, list[Any]], field: str, sink: Sink
) -> None:
    onnx_type, onnx_dims = actual
    declared_type = datatype_name(tensor.data_type)
    if onnx_type is not None and onnx_type != declared_type:
        sink.error(
            field + ".data_type",
            f"data_type is {declared_type} but the ONNX graph has {onnx_type}",
            f"set data_type: TYPE_{'STRING' if onnx_type == 'BYTES' else onnx_type}",
        )
    if onnx_dims == [...]:
        return
    shape = list(tensor.reshape.shape) if tensor.HasField("reshape") else list(tensor.dims)
    if max_batch_size > 0:
        if not onnx_dims:
            sink.error(
                field + ".dims",
                "the ONNX tensor is a scalar but max_batch_size > 0 expects a batch dimension",
                "set max_batch_size: 0 or export the model with a batch dimension",
            )
            return
        _check_batch_dim(onnx_dims[0], max_batch_size, field, sink)
        onnx_dims = onnx_dims[1:]
    if len(onnx_dims) != len(shape):
        sink.error(
            field + ".dims",
            f"rank differs: config {shape} (without batch) vs ONNX {_show(onnx_dims)}",
            "make dims match the graph (batch dimension excluded when max_batch_size > 0)",
        )
        return
    for position, (want, have) in enumerate(zip(shape, onnx_dims, strict=True)):
        if isinstance(have, int) and want != have:
            sink.error(
                field + ".dims",
                f"dimension {position} is {want} in the config but {have} in the ONNX graph",
                f"set it to {have}" + (" (the graph fixes it)" if want == WILDCARD else ""),
            )


def _check_batch_dim(batch: Any, max_batch_size: int, field: str, sink: Sink) -> None:
    if isinstance(batch, int) and batch != 1:
        sink.error(
            field + ".dims",
            f"the ONNX batch dimension is fixed at {batch}; max_batch_size "
            f"{max_batch_size} needs a dynamic one",
            "export with a dynamic first axis (e.g. dynamic_axes={name: {0: 'batch'}}) "
            "or set max_batch_size: 0 and dims with the batch",
        )
    elif batch == 1 and max_batch_size > 1:
        sink.error(
            field + ".dims",
            f"the ONNX batch dimension is fixed at 1 but max_batch_size is {max_batch_size}",
            "export with a dynamic first axis, or set max_batch_size: 1",
        )


def _show(dims: list[Any]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
