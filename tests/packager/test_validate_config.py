"""Config-semantics rules of `packager.validate`: each rule has a failing and a passing case,
applied to a copy of the sample repository through the ModelConfig protobuf."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from tritonclient.grpc import model_config_pb2 as pb

from packager.validate.runner import validate_paths

Change = Callable[[Any], object]


class Rule(NamedTuple):
    model: str
    bad: Change
    good: Change
    field: str  # expected Finding.field prefix
    text: str  # expected in Finding.message
    severity: str = "error"


def _set(path: str, value: object) -> Change:
    """A change that sets a dotted attribute path, e.g. ``input.0.dims`` via callables below."""

    def change(config: Any) -> None:
        *parents, last = path.split(".")
        target = config
        for part in parents:
            target = target[int(part)] if part.isdigit() else getattr(target, part)
        if isinstance(value, list):
            target.ClearField(last)
            getattr(target, last).extend(value)
        else:
            setattr(target, last, value)

    return change


def _both(*changes: Change) -> Change:
    return lambda config: [change(config) for change in changes]


def _add_input(name: str, dtype: int, dims: list[int], optional: bool = False) -> Change:
    def change(config: Any) -> None:
        tensor = config.input.add()
        tensor.name, tensor.data_type, tensor.optional = name, dtype, optional
        tensor.dims.extend(dims)

    return change


def _reshape(index: int, shape: list[int]) -> Change:
    return lambda c: (
        c.input[index].reshape.shape.extend(shape) or c.input[index].reshape.SetInParent()
    )


def _dims(kind: str, index: int, dims: list[int]) -> Change:
    return _set(f"{kind}.{index}.dims", dims)


def _group(kind: int, count: int = 1, gpus: tuple[int, ...] = (), profile: str = "") -> Change:
    def change(config: Any) -> None:
        group = config.instance_group.add()
        group.kind, group.count = kind, count
        group.gpus.extend(gpus)
        if profile:
            group.profile.append(profile)

    return change


RULES: dict[str, Rule] = {
    "max-batch-size-negative": Rule(
        "image_classifier",
        _set("max_batch_size", -1),
        _set("max_batch_size", 1),
        "max_batch_size",
        "must be >= 0",
    ),
    "data-type-invalid": Rule(
        "tokenizer",
        _set("output.0.data_type", pb.TYPE_INVALID),
        _set("output.0.data_type", pb.TYPE_INT32),
        "output[0] (token_ids).data_type",
        "TYPE_INVALID",
    ),
    "dims-zero": Rule(
        "tokenizer",
        _dims("input", 0, [0]),
        _dims("input", 0, [-1]),
        "input[0] (text).dims",
        "dimension 0",
    ),
    "dims-below-minus-one": Rule(
        "tokenizer",
        _dims("input", 0, [-2]),
        _dims("input", 0, [1]),
        "input[0] (text).dims",
        "dimension -2",
    ),
    "dims-empty": Rule(
        "tokenizer",
        _dims("input", 0, []),
        _both(_dims("input", 0, [1]), _reshape(0, [])),
        "input[0] (text).dims",
        "at least one dimension",
    ),
    "input-name-duplicate": Rule(
        "tokenizer",
        _add_input("text", pb.TYPE_STRING, [1]),
        _add_input("lang", pb.TYPE_STRING, [1], optional=True),
        "input[1] (text).name",
        "declared twice",
    ),
    "reshape-element-count": Rule(
        "tokenizer",
        _reshape(0, [2]),
        _reshape(0, [1, 1]),
        "input[0] (text).reshape.shape",
        "same elements",
    ),
    "reshape-variable-segments": Rule(
        "tokenizer",
        _both(_add_input("extra", pb.TYPE_INT32, [2, -1], optional=True), _reshape(1, [-1, 2])),
        _both(_add_input("extra", pb.TYPE_INT32, [2, -1], optional=True), _reshape(1, [2, 1, -1])),
        "input[1] (extra).reshape.shape",
        "-1",
    ),
    "reshape-zero": Rule(
        "tokenizer",
        _reshape(0, [0]),
        _reshape(0, [1]),
        "input[0] (text).reshape.shape",
        "dimension 0",
    ),
    "format-needs-3-dims": Rule(
        "image_classifier",
        _both(_set("input.0.format", 1), _dims("input", 0, [3, 50176]), _reshape(0, [3, 224, 224])),
        _set("input.0.format", 2),
        "input[0] (input).format",
        "3 dims",
    ),
    "shape-tensor-not-tensorrt": Rule(
        "tokenizer",
        _set("input.0.is_shape_tensor", True),
        _set("input.0.is_shape_tensor", False),
        "input[0] (text).is_shape_tensor",
        "TensorRT",
    ),
    "label-file-missing": Rule(
        "image_classifier",
        _set("output.0.label_filename", "labels.txt"),
        _set("output.0.label_filename", "config.pbtxt"),  # any file in the model directory
        "output[0] (logits).label_filename",
        "does not exist",
    ),
    "instance-count-negative": Rule(
        "image_classifier",
        _group(pb.ModelInstanceGroup.KIND_CPU, count=-1),
        _group(pb.ModelInstanceGroup.KIND_CPU, count=2),
        "instance_group[0].count",
        "count is -1",
        "warning",  # Triton replaces it with the default count (core NormalizeInstanceGroup)
    ),
    "instance-cpu-with-gpus": Rule(
        "image_classifier",
        _group(pb.ModelInstanceGroup.KIND_CPU, gpus=(0,)),
        _group(pb.ModelInstanceGroup.KIND_AUTO),
        "instance_group[0].gpus",
        "lists GPUs",
    ),
    "instance-gpu-needs-gpu": Rule(
        "image_classifier",
        _group(pb.ModelInstanceGroup.KIND_GPU, gpus=(0,)),
        _group(pb.ModelInstanceGroup.KIND_MODEL),
        "instance_group[0].kind",
        "needs a GPU",
        "warning",
    ),
    "instance-profile-not-tensorrt": Rule(
        "image_classifier",
        _group(pb.ModelInstanceGroup.KIND_AUTO, profile="0"),
        _group(pb.ModelInstanceGroup.KIND_AUTO),
        "instance_group[0].profile",
        "TensorRT",
    ),
    "ensemble-no-instance-group": Rule(
        "text_pipeline",
        _group(pb.ModelInstanceGroup.KIND_CPU),
        lambda c: c.ClearField("instance_group"),
        "instance_group",
        "not allowed on an ensemble",
    ),
    "ensemble-scheduling-on-plain-model": Rule(
        "image_classifier",
        lambda c: c.ensemble_scheduling.step.add(),
        lambda c: c.ClearField("ensemble_scheduling"),
        "ensemble_scheduling",
        "whose platform is",
    ),
    "ensemble-without-scheduling": Rule(
        "text_pipeline",
        lambda c: c.ClearField("ensemble_scheduling"),
        lambda c: None,
        "ensemble_scheduling",
        "is missing",
    ),
    "warmup-dims-concrete": Rule(
        "tokenizer",
        lambda c: c.model_warmup.add(name="w", batch_size=1).inputs["text"].dims.append(-1),
        lambda c: (
            c.model_warmup.add(name="w", batch_size=1)
            .inputs["text"]
            .MergeFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[1], zero_data=True))
        ),
        "model_warmup[0].inputs[text]",
        "",
    ),
    "warmup-batch-size": Rule(
        "tokenizer",
        lambda c: (
            c.model_warmup.add(name="w", batch_size=9)
            .inputs["text"]
            .MergeFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[1], zero_data=True))
        ),
        lambda c: (
            c.model_warmup.add(name="w", batch_size=8)
            .inputs["text"]
            .MergeFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[1], zero_data=True))
        ),
        "model_warmup[0].batch_size",
        "exceeds max_batch_size",
    ),
}


def _apply(repo: Path, edit_config: Callable[..., Path], rule: Rule, change: Change) -> list[Any]:
    edit_config(rule.model, change)
    return validate_paths([repo])


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_fails(repo: Path, edit_config: Callable[..., Path], name: str) -> None:
    rule = RULES[name]
    findings = _apply(repo, edit_config, rule, rule.bad)
    matching = [
        f
        for f in findings
        if f.field.startswith(rule.field) and rule.text in f.message and f.severity == rule.severity
    ]
    assert matching, findings
    assert all(f.model == rule.model and f.fix for f in matching)
    assert matching[0].file == str(repo / rule.model / "config.pbtxt")


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_passes(repo: Path, edit_config: Callable[..., Path], name: str) -> None:
    rule = RULES[name]
    assert _apply(repo, edit_config, rule, rule.good) == []
