"""Batching rules of `packager.validate` (dynamic batching, priorities, sequence batching
controls, batch inputs/outputs): a failing and a passing case for each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from tritonclient.grpc import model_config_pb2 as pb

from packager.validate.runner import validate_paths

Change = Callable[[Any], object]
Control = pb.ModelSequenceBatching.Control


class Rule(NamedTuple):
    model: str
    bad: Change
    good: Change
    field: str
    text: str
    severity: str = "error"


def _batching(**fields: Any) -> Change:
    def change(config: Any) -> None:
        batching = config.dynamic_batching
        for name, value in fields.items():
            if name == "preferred":
                batching.ClearField("preferred_batch_size")
                batching.preferred_batch_size.extend(value)
            elif name == "queue_policy":
                for level, policy in value.items():
                    batching.priority_queue_policy[level].MergeFrom(policy)
            else:
                setattr(batching, name, value)

    return change


def _sequence(*controls: tuple[str, Any], strategy: Change | None = None) -> Change:
    """Replace dynamic batching on the tokenizer by sequence batching with ``controls``."""

    def change(config: Any) -> None:
        config.sequence_batching.SetInParent()  # oneof: clears dynamic_batching
        for name, control in controls:
            entry = config.sequence_batching.control_input.add(name=name)
            entry.control.append(control)
        if strategy:
            strategy(config.sequence_batching)

    return change


START = Control(kind=Control.CONTROL_SEQUENCE_START, int32_false_true=[0, 1])
READY = Control(kind=Control.CONTROL_SEQUENCE_READY, bool_false_true=[False, True])
CORRID = Control(kind=Control.CONTROL_SEQUENCE_CORRID, data_type=pb.TYPE_UINT64)
DELAY = pb.ModelQueuePolicy(
    timeout_action=pb.ModelQueuePolicy.DELAY, default_timeout_microseconds=5
)


def _batch_input(kind: int, target: list[str], source: list[str], dtype: int) -> Change:
    def change(config: Any) -> None:
        config.batch_input.add(kind=kind, target_name=target, source_input=source, data_type=dtype)

    return change


def _batch_output(target: list[str], source: list[str]) -> Change:
    kind = pb.BatchOutput.BATCH_SCATTER_WITH_INPUT_SHAPE
    return lambda c: c.batch_output.add(kind=kind, target_name=target, source_input=source)


COUNT = pb.BatchInput.BATCH_ELEMENT_COUNT
RULES: dict[str, Rule] = {
    "preferred-above-max": Rule(
        "text_classifier",
        _batching(preferred=[4, 9]),
        _batching(preferred=[8]),
        "dynamic_batching.preferred_batch_size",
        "outside 1..max_batch_size (8)",
    ),
    "preferred-not-positive": Rule(
        "text_classifier",
        _batching(preferred=[0]),
        _batching(preferred=[1]),
        "dynamic_batching.preferred_batch_size",
        "preferred batch size 0",
    ),
    "dynamic-batching-without-batch-dim": Rule(
        "tokenizer",
        lambda c: setattr(c, "max_batch_size", 0),
        lambda c: setattr(c, "max_batch_size", 16),
        "dynamic_batching",
        "max_batch_size is 0",
        "warning",
    ),
    "default-priority-out-of-range": Rule(
        "text_classifier",
        _batching(priority_levels=2, default_priority_level=3),
        _batching(priority_levels=2, default_priority_level=2),
        "dynamic_batching.default_priority_level",
        "outside 1..2",
    ),
    "default-priority-missing": Rule(
        "text_classifier",
        _batching(priority_levels=2),
        _batching(priority_levels=2, default_priority_level=1),
        "dynamic_batching.default_priority_level",
        "outside 1..2",
    ),
    "queue-policy-level-out-of-range": Rule(
        "text_classifier",
        _batching(
            priority_levels=2, default_priority_level=1, queue_policy={3: pb.ModelQueuePolicy()}
        ),
        _batching(
            priority_levels=2, default_priority_level=1, queue_policy={2: pb.ModelQueuePolicy()}
        ),
        "dynamic_batching.priority_queue_policy",
        "level 3",
    ),
    "priority-settings-without-levels": Rule(
        "text_classifier",
        _batching(default_priority_level=1),
        _batching(priority_levels=1, default_priority_level=1),
        "dynamic_batching.priority_levels",
        "ignored",
        "warning",
    ),
    "preserve-ordering-one-level": Rule(
        "text_classifier",
        _batching(preserve_ordering=True, priority_levels=2, default_priority_level=1),
        _batching(preserve_ordering=True, priority_levels=1, default_priority_level=1),
        "dynamic_batching.preserve_ordering",
        "one priority level",
    ),
    "preserve-ordering-no-delay": Rule(
        "text_classifier",
        lambda c: (
            _batching(preserve_ordering=True)(c),
            c.dynamic_batching.default_queue_policy.MergeFrom(DELAY),
        ),
        lambda c: (
            _batching(preserve_ordering=False)(c),
            c.dynamic_batching.default_queue_policy.MergeFrom(DELAY),
        ),
        "dynamic_batching.default_queue_policy",
        "DELAY",
    ),
    "sequence-bool-control-values": Rule(
        "tokenizer",
        _sequence(("START", Control(kind=Control.CONTROL_SEQUENCE_START))),
        _sequence(("START", START), ("READY", READY)),
        "sequence_batching.control_input[0].control",
        "exactly one of",
    ),
    "sequence-bool-control-two-values": Rule(
        "tokenizer",
        _sequence(
            ("START", Control(kind=Control.CONTROL_SEQUENCE_START, fp32_false_true=[0.0, 1.0, 2.0]))
        ),
        _sequence(
            ("START", Control(kind=Control.CONTROL_SEQUENCE_START, fp32_false_true=[0.0, 1.0]))
        ),
        "sequence_batching.control_input[0].control",
        "2 values",
    ),
    "sequence-corrid-type": Rule(
        "tokenizer",
        _sequence(
            ("CORRID", Control(kind=Control.CONTROL_SEQUENCE_CORRID, data_type=pb.TYPE_FP32))
        ),
        _sequence(("CORRID", CORRID), ("START", START)),
        "sequence_batching.control_input[0].control.data_type",
        "FP32 is not allowed",
    ),
    "sequence-corrid-no-false-true": Rule(
        "tokenizer",
        _sequence(
            (
                "CORRID",
                Control(
                    kind=Control.CONTROL_SEQUENCE_CORRID,
                    data_type=pb.TYPE_INT64,
                    int32_false_true=[0, 1],
                ),
            )
        ),
        _sequence(
            ("CORRID", Control(kind=Control.CONTROL_SEQUENCE_CORRID, data_type=pb.TYPE_INT64))
        ),
        "sequence_batching.control_input[0].control",
        "takes a data_type",
    ),
    "sequence-kind-once": Rule(
        "tokenizer",
        _sequence(("START", START), ("START2", START)),
        _sequence(("START", START), ("READY", READY)),
        "sequence_batching.control_input[1].control.kind",
        "more than one",
    ),
    "sequence-control-name-unique": Rule(
        "tokenizer",
        _sequence(("S", START), ("S", READY)),
        _sequence(("START", START), ("READY", READY)),
        "sequence_batching.control_input[1].name",
        "more than one control entry",
    ),
    "sequence-control-name-is-input": Rule(
        "tokenizer",
        _sequence(("text", START)),
        _sequence(("START", START)),
        "sequence_batching.control_input[0].name",
        "also declared as a model input",
        "warning",
    ),
    "sequence-without-controls": Rule(
        "tokenizer",
        _sequence(),
        _sequence(("START", START), ("READY", READY)),
        "sequence_batching.control_input",
        "never sees START",
        "warning",
    ),
    "sequence-oldest-preferred": Rule(
        "tokenizer",
        _sequence(("START", START), strategy=lambda b: b.oldest.preferred_batch_size.append(16)),
        _sequence(("START", START), strategy=lambda b: b.oldest.preferred_batch_size.append(8)),
        "sequence_batching.oldest.preferred_batch_size",
        "outside 1..max_batch_size",
    ),
    "sequence-direct-utilization": Rule(
        "tokenizer",
        _sequence(
            ("START", START), strategy=lambda b: setattr(b.direct, "minimum_slot_utilization", 1.5)
        ),
        _sequence(
            ("START", START), strategy=lambda b: setattr(b.direct, "minimum_slot_utilization", 0.5)
        ),
        "sequence_batching.direct.minimum_slot_utilization",
        "outside 0..1",
    ),
    "sequence-state-names": Rule(
        "tokenizer",
        _sequence(
            ("START", START),
            strategy=lambda b: b.state.add(input_name="in", data_type=pb.TYPE_FP32, dims=[4]),
        ),
        _sequence(
            ("START", START),
            strategy=lambda b: b.state.add(
                input_name="in", output_name="out", data_type=pb.TYPE_FP32, dims=[4]
            ),
        ),
        "sequence_batching.state[0]",
        "input_name and output_name",
    ),
    "batch-input-unknown-source": Rule(
        "tokenizer",
        _batch_input(COUNT, ["count"], ["texts"], pb.TYPE_INT32),
        _batch_input(COUNT, ["count"], ["text"], pb.TYPE_INT32),
        "batch_input[0].source_input",
        "'texts' is not a model input",
    ),
    "batch-input-one-source": Rule(
        "tokenizer",
        _batch_input(COUNT, ["count"], [], pb.TYPE_INT32),
        _batch_input(pb.BatchInput.BATCH_ITEM_SHAPE, ["count"], ["text"], pb.TYPE_FP32),
        "batch_input[0].source_input",
        "exactly 1 source_input",
    ),
    "batch-input-data-type": Rule(
        "tokenizer",
        _batch_input(COUNT, ["count"], ["text"], pb.TYPE_INT64),
        _batch_input(COUNT, ["count"], ["text"], pb.TYPE_FP32),
        "batch_input[0].data_type",
        "TYPE_INT32 or TYPE_FP32",
    ),
    "batch-input-target": Rule(
        "tokenizer",
        _batch_input(COUNT, ["text"], ["text"], pb.TYPE_INT32),
        _batch_input(COUNT, ["text_count"], ["text"], pb.TYPE_INT32),
        "batch_input[0].target_name",
        "also a model input",
        "warning",  # core ValidateBatchIO does not check target names
    ),
    "batch-output-target": Rule(
        "tokenizer",
        _batch_output(["ids"], ["text"]),
        _batch_output(["token_ids"], ["text"]),
        "batch_output[0].target_name",
        "'ids' is not a model output",
    ),
    "batch-output-source": Rule(
        "tokenizer",
        _batch_output(["token_ids"], ["token_ids"]),
        _batch_output(["token_ids", "attn_mask"], ["text"]),
        "batch_output[0].source_input",
        "not a model input",
    ),
}


def _findings(
    repo: Path, edit_config: Callable[..., Path], model: str, change: Change
) -> list[Any]:
    edit_config(model, change)
    return validate_paths([repo])


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_fails(repo: Path, edit_config: Callable[..., Path], name: str) -> None:
    rule = RULES[name]
    findings = _findings(repo, edit_config, rule.model, rule.bad)
    matching = [
        f
        for f in findings
        if f.field.startswith(rule.field) and rule.text in f.message and f.severity == rule.severity
    ]
    assert matching, findings
    assert all(
        f.model == rule.model and f.fix and f.file.endswith("config.pbtxt") for f in matching
    )


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_passes(repo: Path, edit_config: Callable[..., Path], name: str) -> None:
    rule = RULES[name]
    assert _findings(repo, edit_config, rule.model, rule.good) == []
