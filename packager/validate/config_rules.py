"""Config semantics Triton enforces at load time, checked statically on the ModelConfig."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from packager.config import datatype_name
from packager.repository import ModelDir
from packager.validate.batching import (
    check_batch_io,
    check_dynamic_batching,
    check_sequence_batching,
    fed_inputs,
)
from packager.validate.findings import WILDCARD, Sink, dims_problem

CORRID_TYPES = {"UINT64", "INT64", "UINT32", "INT32", "BYTES"}
BATCH_INPUT_TYPES = {"INT32", "FP32"}
#: Triton's tensor byte sizes are int64_t (GetByteSize in src/model_config_utils.h of
#: github.com/triton-inference-server/core, read 2026-12-07)
INT64_MAX = 2**63 - 1
_BOOL_CONTROLS = ("int32_false_true", "fp32_false_true", "bool_false_true")


def check_config(model: ModelDir, sink: Sink) -> None:
    """Every config rule for one model; findings go to ``sink``."""
    config = model.config
    if config.max_batch_size < 0:
        sink.report(
            "TDK201",
            "max_batch_size",
            f"max_batch_size is {config.max_batch_size}; it must be >= 0",
            "set 0 for a model without a batch dimension, or the largest batch it accepts",
        )
    _check_tensors(config.input, "input", config.max_batch_size, sink)
    _check_tensors(config.output, "output", config.max_batch_size, sink)
    _check_inputs_only(config, sink)
    _check_labels(model, sink)
    check_dynamic_batching(config, sink)
    check_sequence_batching(config, sink)
    _check_instance_groups(model, sink)
    check_batch_io(config, sink)
    _check_warmup(config, sink)
    _check_scheduling(model, sink)
    if config.response_cache.enable and (
        config.model_transaction_policy.decoupled or config.HasField("sequence_batching")
    ):
        kind = "decoupled" if config.model_transaction_policy.decoupled else "sequence-batched"
        sink.report(
            "TDK221",
            "response_cache.enable",
            f"the response cache does not support {kind} models; Triton refuses the config",
            "set response_cache { enable: false }",
        )


def _check_tensors(tensors: Iterable[Any], kind: str, max_batch_size: int, sink: Sink) -> None:
    seen: set[str] = set()
    for index, tensor in enumerate(tensors):
        where = f"{kind}[{index}]" + (f" ({tensor.name})" if tensor.name else "")
        if not tensor.name:
            sink.report(
                "TDK202",
                f"{where}.name",
                f"{kind} {index} has no name",
                f"give {kind} {index} a name",
            )
        elif tensor.name in seen:
            sink.report(
                "TDK203",
                f"{where}.name",
                f"{kind} name {tensor.name!r} is declared twice",
                f"rename or remove one of the {kind}s named {tensor.name!r}",
            )
        seen.add(tensor.name)
        if tensor.data_type == 0:
            sink.report(
                "TDK204",
                f"{where}.data_type",
                "data_type is missing or TYPE_INVALID",
                "set data_type, e.g. TYPE_FP32, TYPE_INT32 or TYPE_STRING",
            )
        if not tensor.dims:
            sink.report(
                "TDK205",
                f"{where}.dims",
                "dims is empty; Triton requires at least one dimension",
                "use dims: [ 1 ] with reshape: { shape: [ ] } for a scalar per batch item",
            )
        problem = dims_problem(tensor.dims)
        if problem:
            sink.report(
                "TDK206", f"{where}.dims", f"dims {list(tensor.dims)} {problem}", "fix the dims"
            )
        elif _byte_size(tensor, max_batch_size) > INT64_MAX:
            sink.report(
                "TDK223",
                f"{where}.dims",
                f"dims {list(tensor.dims)} make a tensor of more than 2^63-1 bytes"
                + (f" at batch {max_batch_size}" if max_batch_size > 0 else "")
                + "; Triton's byte sizes are 64-bit, so no request can carry it",
                "give the real dimensions (-1 for a variable one)",
            )
        if tensor.HasField("reshape"):
            _check_reshape(tensor, where, max_batch_size, sink)


def _byte_size(tensor: Any, max_batch_size: int) -> int:
    """Bytes of the tensor's fixed dimensions at the largest batch (a BYTES element counted as
    one byte, a variable dimension as one)."""
    try:
        name = datatype_name(tensor.data_type)
    except ValueError:  # an enum value protobuf kept but does not name
        name = ""
    bits = "".join(ch for ch in name if ch.isdigit())
    size = max(int(bits) // 8, 1) if bits else 1
    return math.prod(d for d in tensor.dims if d > 0) * max(max_batch_size, 1) * size


def _segments(shape: Sequence[int]) -> list[int]:
    """Element counts of the runs between variable-size (-1) dimensions."""
    counts, current = [], 1
    for dim in shape:
        if dim == WILDCARD:
            counts.append(current)
            current = 1
        else:
            current *= dim
    return [*counts, current]


def _check_reshape(tensor: Any, where: str, max_batch_size: int, sink: Sink) -> None:
    shape, dims = list(tensor.reshape.shape), list(tensor.dims)
    field = f"{where}.reshape.shape"
    if not shape and max_batch_size == 0:
        sink.report(
            "TDK207",
            field,
            "an empty reshape on a model with max_batch_size 0 would make the tensor empty",
            "give reshape a shape or enable batching",
        )
        return
    problem = dims_problem(shape)
    if problem:
        sink.report("TDK207", field, f"reshape {shape} {problem}", "fix the reshape")
        return
    if not shape and math.prod(dims) == 1:
        return  # [1] -> [] (scalar) is allowed
    if _segments(dims) != _segments(shape):
        sink.report(
            "TDK207",
            field,
            f"reshape {shape} does not hold the same elements as dims {dims} "
            f"({_count(dims)} vs {_count(shape)})",
            "make the element counts agree (the -1 dimensions must line up too)",
        )


def _count(shape: Sequence[int]) -> str:
    return "variable" if WILDCARD in shape else str(math.prod(shape))


def _check_inputs_only(config: Any, sink: Sink) -> None:
    for index, tensor in enumerate(config.input):
        where = f"input[{index}] ({tensor.name})"
        if tensor.format in (1, 2) and len(tensor.dims) != 3:  # FORMAT_NHWC, FORMAT_NCHW
            sink.report(
                "TDK208",
                f"{where}.format",
                f"format NHWC/NCHW requires 3 dims, got {list(tensor.dims)}",
                "give 3 dims or drop `format`",
            )
    for kind, tensors in (("input", config.input), ("output", config.output)):
        for index, tensor in enumerate(tensors):
            if tensor.is_shape_tensor and config.platform != "tensorrt_plan":
                sink.report(
                    "TDK209",
                    f"{kind}[{index}] ({tensor.name}).is_shape_tensor",
                    "shape tensors are only supported by TensorRT models",
                    "remove is_shape_tensor",
                )


def _check_labels(model: ModelDir, sink: Sink) -> None:
    for index, tensor in enumerate(model.config.output):
        label = tensor.label_filename
        if label and not (model.path / label).is_file():
            sink.report(
                "TDK210",
                f"output[{index}] ({tensor.name}).label_filename",
                f"label file {label!r} does not exist in {model.path}",
                f"add {model.path / label} or remove label_filename",
            )


def _check_instance_groups(model: ModelDir, sink: Sink) -> None:
    config = model.config
    for index, group in enumerate(config.instance_group):
        where = f"instance_group[{index}]"
        kind = type(group).Kind.Name(group.kind)
        if group.count < 0:
            sink.report(
                "TDK211",
                where + ".count",
                f"count is {group.count}; Triton replaces a count below 1 with the backend's "
                "default instance count",
                "set the count you mean (>= 1), or leave it out",
            )
        if group.gpus and kind in ("KIND_CPU", "KIND_MODEL"):
            sink.report(
                "TDK212",
                where + ".gpus",
                f"{kind} instance group lists GPUs {list(group.gpus)}",
                "remove `gpus` or use KIND_GPU",
            )
        if any(gpu < 0 for gpu in group.gpus):
            sink.report(
                "TDK212", where + ".gpus", f"negative GPU id in {list(group.gpus)}", "use ids >= 0"
            )
        if kind == "KIND_GPU":
            sink.report(
                "TDK213",
                where + ".kind",
                "KIND_GPU needs a GPU: the model cannot load on a CPU-only host (local endpoint)",
                "deploy to a GPU instance, or use KIND_AUTO to fall back to CPU",
            )
        if group.profile and config.platform != "tensorrt_plan" and model.backend != "tensorrt":
            sink.report(
                "TDK214",
                where + ".profile",
                "`profile` is only supported by TensorRT models",
                "remove `profile`",
            )
        for profile in group.profile:
            if not profile.isdigit():
                sink.report(
                    "TDK214",
                    where + ".profile",
                    f"profile {profile!r} is not a non-negative integer",
                    'use the optimization profile index, e.g. "0"',
                )


def _check_warmup(config: Any, sink: Sink) -> None:
    declared = {t.name: t for t in config.input}
    for index, warmup in enumerate(config.model_warmup):
        where = f"model_warmup[{index}]"
        if config.max_batch_size and warmup.batch_size > config.max_batch_size:
            sink.report(
                "TDK215",
                where + ".batch_size",
                f"warmup batch_size {warmup.batch_size} exceeds max_batch_size",
                f"use a batch_size <= {config.max_batch_size}",
            )
        for name in sorted(warmup.inputs):
            sample = warmup.inputs[name]
            if name in fed_inputs(config):
                continue  # Triton adds it to the warmup request as an override (control) input
            if name not in declared:
                sink.report(
                    "TDK222",
                    where + f".inputs[{name}]",
                    f"{name!r} is neither a model input nor a control, state or batch input; "
                    "Triton passes it to the backend, which may refuse the warmup",
                    f"use one of {sorted(declared)}",
                )
            elif sample.data_type != declared[name].data_type:
                sink.report(
                    "TDK216",
                    where + f".inputs[{name}].data_type",
                    "warmup data_type differs from the input's data_type",
                    f"use {datatype_name(declared[name].data_type)}",
                )
            if any(d < 1 for d in sample.dims):
                sink.report(
                    "TDK217",
                    where + f".inputs[{name}].dims",
                    f"warmup dims {list(sample.dims)} must be concrete (no -1 or 0)",
                    "give the exact shape of the warmup sample",
                )


def _check_scheduling(model: ModelDir, sink: Sink) -> None:
    config = model.config
    if model.is_ensemble:
        if not config.HasField("ensemble_scheduling"):
            sink.report(
                "TDK218",
                "ensemble_scheduling",
                "platform is ensemble but ensemble_scheduling is missing",
                "add ensemble_scheduling { step [...] }",
            )
        for field in ("instance_group", "model_warmup"):
            if len(getattr(config, field)):
                sink.report(
                    "TDK219", field, f"{field} is not allowed on an ensemble", f"remove {field}"
                )
        if config.HasField("optimization"):
            sink.report(
                "TDK219", "optimization", "optimization is not allowed on an ensemble", "remove it"
            )
    elif config.HasField("ensemble_scheduling"):
        sink.report(
            "TDK220",
            "ensemble_scheduling",
            f"ensemble_scheduling on a model whose platform is {config.platform!r}",
            'set platform: "ensemble" or remove ensemble_scheduling',
        )
