"""ONNX file rules: the graph's inputs and outputs against the config (names, element types,
ranks, batch dimension), read with the ``onnx`` package, weights left on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packager.config import datatype_name
from packager.protos import generated_module
from packager.repository import ModelDir
from packager.validate.batching import fed_inputs
from packager.validate.findings import WILDCARD, Sink
from packager.validate.layout import expected_file, served_versions
from packager.validate.onnx_structure import check_structure

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
        if path.is_file() and path.stat().st_size > 0:
            graph = _load_graph(path, sink)
            if graph is not None:
                check_structure(graph, path, sink)
                _compare(model.config, graph, path, sink)


def _load_graph(path: Path, sink: Sink) -> Any:
    onnx_ml = generated_module("onnx.onnx_ml_pb2", "onnx")  # not `import onnx`: 50 ms
    try:
        return onnx_ml.ModelProto.FromString(path.read_bytes()).graph
    except Exception as exc:  # the protobuf decoder raises several unrelated types
        sink.report(
            "TDK501",
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
    batch_targets = {t for b in config.batch_output for t in b.target_name}
    for kind, declared, actual in (
        ("input", config.input, graph_inputs),
        ("output", config.output, graph_outputs),
    ):
        for index, tensor in enumerate(declared):
            field = f"{kind}[{index}] ({tensor.name})"
            if kind == "input" and tensor.optional and config.max_batch_size > 0:
                sink.report(
                    "TDK508",
                    field + ".optional",
                    f"optional input {tensor.name!r} on a model with max_batch_size "
                    f"{config.max_batch_size}; the onnxruntime backend refuses to load it",
                    "set max_batch_size: 0 or make the input required",
                )
            if tensor.name not in actual:
                if not (kind == "input" and tensor.name in initializers):
                    sink.report(
                        "TDK502",
                        field + ".name",
                        f"the ONNX graph in {path} has no {kind} {tensor.name!r}",
                        f"rename it to one of the graph's {kind}s: {sorted(actual)}",
                    )
                continue
            if kind == "input" and tensor.allow_ragged_batch:
                _check_ragged(tensor, actual[tensor.name], field, sink)
                continue
            if kind == "output" and tensor.name in batch_targets:
                continue  # the backend does not compare a batch output's shape
            _compare_tensor(
                config.max_batch_size, tensor, actual[tensor.name], field, sink, kind == "output"
            )
    for name in sorted(fed_inputs(config) - set(graph_inputs) - initializers):
        sink.report(
            "TDK510",
            _fed_field(config, name),
            f"Triton feeds {name!r} (a sequence control, state or batch input) but the ONNX "
            f"graph in {path} has no such input; the onnxruntime backend counts it and refuses "
            "the model",
            f"remove {name!r} from the config or export the graph with that input",
        )
    declared_inputs = {t.name for t in config.input} | fed_inputs(config)
    for name in sorted(set(graph_inputs) - declared_inputs):
        sink.report(
            "TDK503",
            "input",
            f"the ONNX graph in {path} needs input {name!r}, which the config does not declare "
            "(as an input, a sequence control tensor, a sequence state or a batch input)",
            f"add an input named {name!r} to config.pbtxt",
        )


def _fed_field(config: Any, name: str) -> str:
    """The config field that makes Triton feed ``name``, for the finding's position."""
    batcher = config.sequence_batching
    for index, control in enumerate(batcher.control_input):
        if control.name == name:
            return f"sequence_batching.control_input[{index}]"
    for index, state in enumerate(batcher.state):
        if state.input_name == name:
            return f"sequence_batching.state[{index}]"
    return "batch_input"


def _check_ragged(
    tensor: Any, actual: tuple[str | None, list[Any]], field: str, sink: Sink
) -> None:
    """A ragged input reaches the model flattened: the graph must take it as ``[-1]``."""
    dims = actual[1]
    if dims != [...] and (len(dims) != 1 or isinstance(dims[0], int)):
        sink.report(
            "TDK509",
            field + ".allow_ragged_batch",
            f"ragged input {tensor.name!r} has shape {_show(dims)} in the ONNX graph; the "
            "onnxruntime backend needs [-1] (the batch is concatenated)",
            "export the input as a 1-D tensor with a dynamic dimension",
        )


def _compare_tensor(
    max_batch_size: int,
    tensor: Any,
    actual: tuple[str | None, list[Any]],
    field: str,
    sink: Sink,
    output: bool = False,
) -> None:
    """As the onnxruntime backend's ValidateInputs/ValidateOutputs: data type, then dims
    (outputs compared exactly, a variable graph dimension included)."""
    onnx_type, onnx_dims = actual
    declared_type = datatype_name(tensor.data_type)
    if onnx_type is not None and onnx_type != declared_type:
        sink.report(
            "TDK504",
            field + ".data_type",
            f"data_type is {declared_type} but the ONNX graph has {onnx_type}",
            f"set data_type: TYPE_{'STRING' if onnx_type == 'BYTES' else onnx_type}",
        )
    if onnx_dims == [...]:
        return
    shape = list(tensor.reshape.shape) if tensor.HasField("reshape") else list(tensor.dims)
    if not onnx_dims:
        if any(d != 1 for d in shape):
            sink.report(
                "TDK505",
                field + ".dims",
                f"the ONNX tensor is a scalar; the config may only give dims of 1, not {shape}",
                "set dims: [ 1 ]",
            )
        return
    if max_batch_size > 0:
        if _check_batch_dim(onnx_dims[0], max_batch_size, field, sink):
            return
        onnx_dims = onnx_dims[1:]
    if len(onnx_dims) != len(shape):
        sink.report(
            "TDK505",
            field + ".dims",
            f"rank differs: config {shape} (without batch) vs ONNX {_show(onnx_dims)}",
            "make dims match the graph (batch dimension excluded when max_batch_size > 0)",
        )
        return
    for position, (want, have) in enumerate(zip(shape, onnx_dims, strict=True)):
        if isinstance(have, int) and want != have:
            sink.report(
                "TDK506",
                field + ".dims",
                f"dimension {position} is {want} in the config but {have} in the ONNX graph",
                f"set it to {have}" + (" (the graph fixes it)" if want == WILDCARD else ""),
            )
        elif output and not isinstance(have, int) and want != WILDCARD:
            sink.report(
                "TDK506",
                field + ".dims",
                f"dimension {position} is {want} in the config but variable in the ONNX graph; "
                "the onnxruntime backend compares output shapes exactly",
                "set it to -1",
            )


def _check_batch_dim(batch: Any, max_batch_size: int, field: str, sink: Sink) -> bool:
    """True (and a finding) when the graph's first dimension is not variable."""
    if not isinstance(batch, int):
        return False
    sink.report(
        "TDK507",
        field + ".dims",
        f"the ONNX batch dimension is fixed at {batch}; with max_batch_size {max_batch_size} "
        "the onnxruntime backend needs a variable first dimension",
        "export with a dynamic first axis (e.g. dynamic_axes={name: {0: 'batch'}}) "
        "or set max_batch_size: 0 and give the batch in dims",
    )
    return True


def _show(dims: list[Any]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
