"""Batching rules: dynamic batching and priorities, sequence batching controls, batch I/O."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from packager.config import datatype_name
from packager.validate.findings import Sink, dims_problem

CORRID_TYPES = {"UINT64", "INT64", "UINT32", "INT32", "BYTES"}
BATCH_INPUT_TYPES = {"INT32", "FP32"}
_BOOL_CONTROLS = ("int32_false_true", "fp32_false_true", "bool_false_true")


def fed_inputs(config: Any) -> set[str]:
    """Every tensor Triton feeds the model besides ``input``: sequence control tensors,
    sequence state inputs and batch inputs (the onnxruntime backend counts them all)."""
    batcher = config.sequence_batching
    names = {c.name for c in batcher.control_input}
    names.update(state.input_name for state in batcher.state)
    names.update(t for batch_input in config.batch_input for t in batch_input.target_name)
    return names


def _check_preferred(sizes: Iterable[int], max_batch_size: int, field: str, sink: Sink) -> None:
    for index, size in enumerate(sizes):
        if size <= 0 or size > max_batch_size:
            sink.report(
                "TDK301",
                f"{field}[{index}]",
                f"preferred batch size {size} is outside 1..max_batch_size ({max_batch_size})",
                f"use sizes between 1 and {max_batch_size}, or raise max_batch_size",
            )


def check_dynamic_batching(config: Any, sink: Sink) -> None:
    if not config.HasField("dynamic_batching"):
        return
    batching = config.dynamic_batching
    if config.max_batch_size == 0:
        sink.report(
            "TDK302",
            "dynamic_batching",
            "dynamic batching has no effect: max_batch_size is 0, so requests are never batched",
            "set max_batch_size > 0 (the model needs a leading batch dimension) or remove it",
        )
    field = "dynamic_batching.preferred_batch_size"
    _check_preferred(batching.preferred_batch_size, config.max_batch_size, field, sink)
    _check_priorities(batching, sink)


def _check_priorities(batching: Any, sink: Sink) -> None:
    levels = batching.priority_levels
    prefix = "dynamic_batching."
    if levels == 0 and (batching.default_priority_level or batching.priority_queue_policy):
        sink.report(
            "TDK303",
            prefix + "priority_levels",
            "default_priority_level / priority_queue_policy are ignored while priority_levels is 0",
            "set priority_levels to the number of levels, or remove the priority settings",
        )
    if levels and not 1 <= batching.default_priority_level <= levels:
        sink.report(
            "TDK304",
            prefix + "default_priority_level",
            f"default_priority_level {batching.default_priority_level} is outside 1..{levels}",
            f"set default_priority_level between 1 and {levels}",
        )
    for level in sorted(batching.priority_queue_policy):
        if levels and not 1 <= level <= levels:
            sink.report(
                "TDK304",
                prefix + "priority_queue_policy",
                f"priority_queue_policy for level {level} is outside 1..{levels}",
                f"use levels between 1 and {levels}",
            )
    if batching.preserve_ordering:
        if levels > 1:
            sink.report(
                "TDK305",
                prefix + "preserve_ordering",
                f"preserve_ordering allows one priority level, priority_levels is {levels}",
                "drop preserve_ordering or use a single priority level",
            )
        policies = [batching.default_queue_policy, *batching.priority_queue_policy.values()]
        if any(p.default_timeout_microseconds and p.timeout_action == 1 for p in policies):
            sink.report(
                "TDK305",
                prefix + "default_queue_policy.timeout_action",
                "timeout_action DELAY cannot be combined with preserve_ordering",
                "use timeout_action REJECT or drop preserve_ordering",
            )


def check_sequence_batching(config: Any, sink: Sink) -> None:
    if not config.HasField("sequence_batching"):
        return
    batcher = config.sequence_batching
    field = "sequence_batching.control_input"
    if not batcher.control_input and not batcher.state:
        sink.report(
            "TDK306",
            field,
            "sequence batching without control inputs: the model never sees START/READY/END",
            "add control_input entries for CONTROL_SEQUENCE_START and CONTROL_SEQUENCE_READY",
        )
    _check_control_inputs(batcher, {t.name for t in config.input}, sink)
    _check_strategy(batcher, config.max_batch_size, sink)
    _check_states(batcher, sink)


def _check_control_inputs(batcher: Any, inputs: set[str], sink: Sink) -> None:
    field = "sequence_batching.control_input"
    names: set[str] = set()
    kinds: set[int] = set()
    for index, control_input in enumerate(batcher.control_input):
        where = f"{field}[{index}]"
        if not control_input.name:
            sink.report(
                "TDK307", where + ".name", "control input has no name", "name the control tensor"
            )
        elif control_input.name in names:
            sink.report(
                "TDK307",
                where + ".name",
                f"control tensor {control_input.name!r} is given for more than one control "
                "entry; Triton refuses the config",
                "give each control tensor its own name",
            )
        elif control_input.name in inputs:
            sink.report(
                "TDK318",
                where + ".name",
                f"control tensor {control_input.name!r} is also declared as a model input; "
                "the sequence batcher overrides what clients send for it",
                "remove it from `input` (clients never send control tensors)",
            )
        names.add(control_input.name)
        for control in control_input.control:
            if control.kind in kinds:
                kind_name = type(control).Kind.Name(control.kind)
                sink.report(
                    "TDK308",
                    where + ".control.kind",
                    f"{kind_name} is given by more than one control tensor",
                    f"keep one {kind_name} control",
                )
            kinds.add(control.kind)
            _check_control(control, where + ".control", sink)


def _check_strategy(batcher: Any, max_batch_size: int, sink: Sink) -> None:
    if batcher.HasField("oldest"):
        sizes = batcher.oldest.preferred_batch_size
        field = "sequence_batching.oldest.preferred_batch_size"
        _check_preferred(sizes, max_batch_size, field, sink)
    if batcher.HasField("direct") and not 0 <= batcher.direct.minimum_slot_utilization <= 1:
        sink.report(
            "TDK311",
            "sequence_batching.direct.minimum_slot_utilization",
            f"minimum_slot_utilization {batcher.direct.minimum_slot_utilization} is outside 0..1",
            "use a value in (0.0, 1.0]",
        )


def _check_states(batcher: Any, sink: Sink) -> None:
    for index, state in enumerate(batcher.state):
        where = f"sequence_batching.state[{index}]"
        if not state.input_name or not state.output_name:
            sink.report("TDK312", where, "state needs input_name and output_name", "set both names")
        if state.data_type == 0:
            sink.report(
                "TDK312", where + ".data_type", "state data_type is TYPE_INVALID", "set data_type"
            )
        problem = dims_problem(state.dims)
        if problem:
            sink.report(
                "TDK312", where + ".dims", f"state dims {list(state.dims)} {problem}", "fix dims"
            )


def _check_control(control: Any, field: str, sink: Sink) -> None:
    kind_name = type(control).Kind.Name(control.kind)
    given = [name for name in _BOOL_CONTROLS if len(getattr(control, name))]
    if kind_name == "CONTROL_SEQUENCE_CORRID":
        if given:
            sink.report(
                "TDK309",
                field,
                f"{kind_name} takes a data_type, not {given[0]}",
                f"remove {given[0]} and set data_type (TYPE_UINT64, TYPE_INT64, ...)",
            )
        dtype = datatype_name(control.data_type)
        if dtype not in CORRID_TYPES:
            sink.report(
                "TDK310",
                field + ".data_type",
                f"{kind_name} data_type {dtype} is not allowed",
                "use TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING",
            )
        return
    if len(given) != 1 or len(getattr(control, given[0])) != 2:
        sink.report(
            "TDK309",
            field,
            f"{kind_name} needs exactly one of {', '.join(_BOOL_CONTROLS)} with 2 values "
            f"(false, true); got {given or 'none'}",
            f"e.g. int32_false_true: [ 0, 1 ] for {kind_name}",
        )


def check_batch_io(config: Any, sink: Sink) -> None:
    inputs = {t.name for t in config.input}
    outputs = {t.name for t in config.output}
    if (config.batch_input or config.batch_output) and config.max_batch_size == 0:
        sink.report(
            "TDK313",
            "batch_input",
            "batch inputs/outputs only apply to batched requests, max_batch_size is 0",
            "set max_batch_size > 0 or remove batch_input/batch_output",
        )
    for index, batch_input in enumerate(config.batch_input):
        where = f"batch_input[{index}]"
        _check_sources(batch_input.source_input, inputs, where, sink)
        dtype = datatype_name(batch_input.data_type)
        if dtype not in BATCH_INPUT_TYPES:
            sink.report(
                "TDK314",
                where + ".data_type",
                f"batch input data_type is {dtype}; Triton accepts TYPE_INT32 or TYPE_FP32",
                "set data_type: TYPE_INT32 or TYPE_FP32",
            )
        if len(batch_input.target_name) != 1:
            sink.report(
                "TDK315",
                where + ".target_name",
                f"batch input has {len(batch_input.target_name)} target_name(s); backends such "
                "as onnxruntime count one model input per batch input",
                "name the one tensor the backend receives in target_name",
            )
        for target in batch_input.target_name:
            if target in inputs:
                sink.report(
                    "TDK315",
                    where + ".target_name",
                    f"target_name {target!r} is also a model input: the batch input and the "
                    "client's tensor would share a name",
                    "choose a target name that is not a declared input",
                )
    for index, batch_output in enumerate(config.batch_output):
        where = f"batch_output[{index}]"
        _check_sources(batch_output.source_input, inputs, where, sink)
        targets = list(batch_output.target_name)
        for target in targets:
            if target not in outputs:
                sink.report(
                    "TDK316",
                    where + ".target_name",
                    f"target_name {target!r} is not a model output",
                    f"use one of {sorted(outputs)}",
                )
        if len(set(targets)) != len(targets):
            sink.report(
                "TDK316", where + ".target_name", "a target_name is repeated", "list each once"
            )


def _check_sources(sources: Sequence[str], inputs: set[str], where: str, sink: Sink) -> None:
    if len(sources) != 1:
        sink.report(
            "TDK317",
            where + ".source_input",
            f"expects exactly 1 source_input, got {len(sources)}",
            "name one model input in source_input",
        )
    for source in sources:
        if source not in inputs:
            sink.report(
                "TDK317",
                where + ".source_input",
                f"source_input {source!r} is not a model input",
                f"use one of {sorted(inputs)}",
            )
