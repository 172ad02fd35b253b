# ruff: noqa: E501  (the fixture table keeps one rule per line)
"""Every registered rule has a failing and a passing fixture: applied to a copy of the sample
repository, the failing one yields a finding with the rule's code, the passing one none."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tritonclient.grpc import model_config_pb2 as pb

from packager.config import dump_config, load_config
from packager.validate.rules import ENGINE_CODES, RULES, TARGET_CODES
from packager.validate.runner import validate_paths
from tests.validate.helpers import onnx_model, structured_onnx

Fix = Callable[[Path], object]
Ctl = pb.ModelSequenceBatching.Control
TC, IC, TOK, PIPE = "text_classifier", "image_classifier", "tokenizer", "text_pipeline"


def cfg(model: str, change: Callable[[Any], object]) -> Fix:
    def apply(repo: Path) -> None:
        path = repo / model / "config.pbtxt"
        config = load_config(path)
        change(config)
        path.write_text(dump_config(config), encoding="utf-8")

    return apply


def nothing(repo: Path) -> None:
    """The untouched sample repository."""


def seq(*controls: tuple[str, Any], extra: Callable[[Any], object] | None = None) -> Fix:
    def change(config: Any) -> None:
        config.sequence_batching.SetInParent()
        for name, control in controls:
            config.sequence_batching.control_input.add(name=name).control.append(control)
        if extra:
            extra(config)

    return cfg(TOK, change)


START = Ctl(kind=Ctl.CONTROL_SEQUENCE_START, int32_false_true=[0, 1])
READY = Ctl(kind=Ctl.CONTROL_SEQUENCE_READY, int32_false_true=[0, 1])


def step(index: int, change: Callable[[Any], object]) -> Fix:
    return cfg(PIPE, lambda c: change(c.ensemble_scheduling.step[index]))


def write(rel: str, content: bytes) -> Fix:
    def apply(repo: Path) -> None:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(content)

    return apply


def rmdir(rel: str) -> Fix:
    return lambda repo: shutil.rmtree(repo / rel)


def both(*fixes: Fix) -> Fix:
    return lambda repo: [fix(repo) for fix in fixes]


def _dims(config: Any, kind: str, index: int, dims: list[int]) -> None:
    tensor = getattr(config, kind)[index]
    tensor.ClearField("dims")
    tensor.dims.extend(dims)


def _add_input(name: str, dtype: int, dims: list[int], **kw: Any) -> Callable[[Any], object]:
    return lambda c: c.input.add(name=name, data_type=dtype, dims=dims, **kw)


def _batch_input(dtype: int = pb.TYPE_INT32, target: str = "IDX", source: str = "text") -> Any:
    return lambda c: c.batch_input.add(
        kind=pb.BatchInput.BATCH_ELEMENT_COUNT, target_name=[target], data_type=dtype,
        source_input=[source],
    )  # fmt: skip


def _batch_output(target: str) -> Any:
    return lambda c: c.batch_output.add(
        target_name=[target], kind=pb.BatchOutput.BATCH_SCATTER_WITH_INPUT_SHAPE,
        source_input=["text"],
    )  # fmt: skip


def _decoupled(c: Any) -> None:
    c.model_transaction_policy.decoupled = True


def _split_tokenizer(config: Any) -> None:
    """Two tokenizer steps (both decoupled) each feeding one input of the classifier."""
    first, second = config.ensemble_scheduling.step[0], config.ensemble_scheduling.step[1]
    first.output_map.pop("attn_mask")
    extra = config.ensemble_scheduling.step.add(model_name=TOK, model_version=-1)
    extra.input_map["text"] = "text"
    extra.output_map["attn_mask"] = "attn_mask"
    del second  # the classifier step keeps its inputs: token_ids (step 0), attn_mask (step 2)


FIXTURES: dict[str, tuple[Fix, Fix]] = {
    "TDK101": (lambda r: (r / "extra" / "1").mkdir(parents=True), nothing),
    "TDK102": (write("tokenizer/config.pbtxt", b"name: [oops\n"), nothing),
    "TDK103": (cfg(TOK, lambda c: setattr(c, "name", "tok")), cfg(TOK, lambda c: c.ClearField("name"))),
    "TDK104": (lambda r: (r / IC).rename(r / "image classifier") or cfg("image classifier", lambda c: setattr(c, "name", ""))(r), nothing),
    "TDK105": (lambda r: shutil.copytree(r / TOK, r.parent / "other" / TOK), nothing),
    "TDK106": (cfg(IC, lambda c: (c.ClearField("backend"), setattr(c, "platform", "caffe2"))), cfg(IC, lambda c: (c.ClearField("backend"), setattr(c, "platform", "onnxruntime_onnx")))),
    "TDK107": (cfg(IC, lambda c: setattr(c, "platform", "tensorrt_plan")), nothing),
    "TDK108": (both(cfg(IC, lambda c: setattr(c, "backend", "")), lambda r: (r / IC / "1" / "model.onnx").rename(r / IC / "1" / "weights.bin")), cfg(IC, lambda c: setattr(c, "backend", ""))),
    "TDK109": (rmdir(f"{IC}/1"), nothing),
    "TDK110": (lambda r: (r / IC / "old").mkdir(), nothing),
    "TDK111": (cfg(IC, lambda c: c.version_policy.specific.versions.append(2)), cfg(IC, lambda c: c.version_policy.specific.versions.append(1))),
    "TDK112": (cfg(IC, lambda c: setattr(c, "default_model_filename", "../x.onnx")), cfg(IC, lambda c: setattr(c, "default_model_filename", "model.onnx"))),
    "TDK113": (lambda r: (r / IC / "1" / "model.onnx").rename(r / IC / "1" / "m.onnx"), nothing),
    "TDK114": (lambda r: (r / TOK / "1" / "link").symlink_to("model.py"), nothing),
    "TDK115": (write(f"{IC}/1/model.onnx", b""), nothing),
    "TDK117": (lambda r: (r / IC / "config.pbtxt").unlink(), nothing),
    "TDK118": (write("plan/1/model.plan", b"a serialized engine"), nothing),
    "TDK116": (both(cfg(IC, lambda c: c.version_policy.specific.versions.append(1)), lambda r: (r / IC / "2").mkdir()),
               both(cfg(IC, lambda c: c.version_policy.specific.versions.append(1)), lambda r: shutil.copytree(r / IC / "1", r / IC / "2"))),
    "TDK201": (cfg(IC, lambda c: setattr(c, "max_batch_size", -1)), nothing),
    "TDK202": (cfg(TOK, lambda c: c.output.add(data_type=pb.TYPE_INT32, dims=[1])), cfg(TOK, lambda c: c.output.add(name="extra", data_type=pb.TYPE_INT32, dims=[1]))),
    "TDK203": (cfg(TOK, lambda c: c.output.add(name="attn_mask", data_type=pb.TYPE_INT32, dims=[1])), nothing),
    "TDK204": (cfg(TOK, lambda c: setattr(c.output[0], "data_type", pb.TYPE_INVALID)), nothing),
    "TDK205": (cfg(TOK, lambda c: _dims(c, "output", 0, [])), nothing),
    "TDK206": (cfg(TOK, lambda c: _dims(c, "output", 0, [0])), cfg(TOK, lambda c: _dims(c, "output", 0, [-1]))),
    "TDK207": (cfg(TOK, lambda c: c.input[0].reshape.shape.extend([2])), cfg(TOK, lambda c: c.input[0].reshape.SetInParent())),
    "TDK208": (cfg(TOK, lambda c: setattr(c.input[0], "format", pb.ModelInput.FORMAT_NCHW)), nothing),
    "TDK209": (cfg(TOK, lambda c: setattr(c.input[0], "is_shape_tensor", True)), nothing),
    "TDK210": (cfg(TOK, lambda c: setattr(c.output[0], "label_filename", "labels.txt")), both(cfg(TOK, lambda c: setattr(c.output[0], "label_filename", "labels.txt")), write(f"{TOK}/labels.txt", b"a\n"))),
    "TDK211": (cfg(TOK, lambda c: setattr(c.instance_group[0], "count", -1)), cfg(TOK, lambda c: setattr(c.instance_group[0], "count", 2))),
    "TDK212": (cfg(TOK, lambda c: c.instance_group[0].gpus.append(0)), nothing),
    "TDK213": (cfg(TOK, lambda c: setattr(c.instance_group[0], "kind", pb.ModelInstanceGroup.KIND_GPU)), cfg(TOK, lambda c: setattr(c.instance_group[0], "kind", pb.ModelInstanceGroup.KIND_AUTO))),
    "TDK214": (cfg(TOK, lambda c: c.instance_group[0].profile.append("0")), nothing),
    "TDK215": (cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=9)), cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=8))),
    "TDK216": (cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=1).inputs["text"].CopyFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_INT32, dims=[1], zero_data=True))),
               cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=1).inputs["text"].CopyFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[1], zero_data=True)))),
    "TDK217": (cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=1).inputs["text"].CopyFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[-1], zero_data=True))), nothing),
    "TDK218": (cfg(PIPE, lambda c: c.ClearField("ensemble_scheduling")), nothing),
    "TDK219": (cfg(PIPE, lambda c: c.instance_group.add(count=1)), nothing),
    "TDK220": (cfg(TOK, lambda c: c.ensemble_scheduling.step.add(model_name="x")), nothing),
    "TDK221": (cfg(TOK, lambda c: (_decoupled(c), setattr(c.response_cache, "enable", True))), cfg(TOK, _decoupled)),
    "TDK222": (cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=1).inputs["nope"].CopyFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[1], zero_data=True))),
               cfg(TOK, lambda c: c.model_warmup.add(name="w", batch_size=1).inputs["text"].CopyFrom(pb.ModelWarmup.Input(data_type=pb.TYPE_STRING, dims=[1], zero_data=True)))),
    "TDK301": (cfg(TC, lambda c: c.dynamic_batching.preferred_batch_size.append(64)), nothing),
    "TDK302": (cfg(IC, lambda c: (setattr(c, "max_batch_size", 0), _dims(c, "input", 0, [1, 3, 224, 224]), _dims(c, "output", 0, [1, 11]))),
               cfg(IC, lambda c: (setattr(c, "max_batch_size", 0), c.ClearField("dynamic_batching"), _dims(c, "input", 0, [1, 3, 224, 224]), _dims(c, "output", 0, [1, 11])))),
    "TDK303": (cfg(TOK, lambda c: setattr(c.dynamic_batching, "default_priority_level", 1)), cfg(TOK, lambda c: (setattr(c.dynamic_batching, "priority_levels", 2), setattr(c.dynamic_batching, "default_priority_level", 1)))),
    "TDK304": (cfg(TOK, lambda c: (setattr(c.dynamic_batching, "priority_levels", 2), setattr(c.dynamic_batching, "default_priority_level", 3))), nothing),
    "TDK305": (cfg(TOK, lambda c: (setattr(c.dynamic_batching, "priority_levels", 2), setattr(c.dynamic_batching, "default_priority_level", 1), setattr(c.dynamic_batching, "preserve_ordering", True))),
               cfg(TOK, lambda c: setattr(c.dynamic_batching, "preserve_ordering", True))),
    "TDK306": (seq(), seq(("START", START))),
    "TDK307": (seq(("S", START), ("S", READY)), seq(("START", START), ("READY", READY))),
    "TDK308": (seq(("A", START), ("B", START)), seq(("A", START), ("B", READY))),
    "TDK309": (seq(("S", Ctl(kind=Ctl.CONTROL_SEQUENCE_START, int32_false_true=[0]))), seq(("S", START))),
    "TDK310": (seq(("C", Ctl(kind=Ctl.CONTROL_SEQUENCE_CORRID, data_type=pb.TYPE_FP32))), seq(("C", Ctl(kind=Ctl.CONTROL_SEQUENCE_CORRID, data_type=pb.TYPE_UINT64)))),
    "TDK311": (seq(("S", START), extra=lambda c: setattr(c.sequence_batching.direct, "minimum_slot_utilization", 2.0)), seq(("S", START), extra=lambda c: setattr(c.sequence_batching.direct, "minimum_slot_utilization", 0.5))),
    "TDK312": (seq(("S", START), extra=lambda c: c.sequence_batching.state.add(input_name="in", data_type=pb.TYPE_FP32, dims=[1])),
               seq(("S", START), extra=lambda c: c.sequence_batching.state.add(input_name="in", output_name="out", data_type=pb.TYPE_FP32, dims=[1]))),
    "TDK313": (cfg(IC, lambda c: (setattr(c, "max_batch_size", 0), c.ClearField("dynamic_batching"), _dims(c, "input", 0, [1, 3, 224, 224]), _dims(c, "output", 0, [1, 11]), c.batch_input.add(kind=pb.BatchInput.BATCH_ELEMENT_COUNT, target_name=["I"], data_type=pb.TYPE_INT32, source_input=["input"]))),
               nothing),
    "TDK314": (cfg(TOK, _batch_input(pb.TYPE_INT64)), cfg(TOK, _batch_input())),
    "TDK315": (cfg(TOK, _batch_input(target="text")), cfg(TOK, _batch_input())),
    "TDK316": (cfg(TOK, _batch_output("nope")), cfg(TOK, _batch_output("token_ids"))),
    "TDK317": (cfg(TOK, _batch_input(source="nope")), cfg(TOK, _batch_input())),
    "TDK318": (seq(("START", START), extra=lambda c: c.input.add(name="START", data_type=pb.TYPE_INT32, dims=[1])), seq(("START", START))),
    "TDK401": (cfg(PIPE, lambda c: (c.ensemble_scheduling.ClearField("step"), c.ensemble_scheduling.SetInParent())), nothing),
    "TDK402": (step(0, lambda s: setattr(s, "model_name", "missing")), nothing),
    "TDK403": (step(1, lambda s: s.ClearField("output_map")), nothing),
    "TDK404": (step(0, lambda s: s.output_map.__setitem__("nope", "x")), nothing),
    "TDK405": (step(1, lambda s: s.output_map.__setitem__("pooled_output", "output")), nothing),
    "TDK406": (step(0, lambda s: setattr(s, "model_version", 7)), step(0, lambda s: setattr(s, "model_version", 1))),
    "TDK407": (cfg(TOK, lambda c: setattr(c, "max_batch_size", 4)), cfg(TOK, lambda c: setattr(c, "max_batch_size", 16))),
    "TDK408": (step(1, lambda s: s.input_map.__setitem__("nope", "token_ids")), nothing),
    "TDK409": (step(1, lambda s: s.input_map.__setitem__("token_ids", "ghost")), nothing),
    "TDK410": (step(1, lambda s: s.input_map.pop("attn_mask")), nothing),
    "TDK411": (cfg(PIPE, lambda c: setattr(c.output[1], "data_type", pb.TYPE_INT32)), nothing),
    "TDK412": (cfg(PIPE, lambda c: c.input.add(name="unused", data_type=pb.TYPE_FP32, dims=[1])), nothing),
    "TDK413": (cfg(PIPE, lambda c: c.ClearField("output") or c.output.add(name="output", data_type=pb.TYPE_FP32, dims=[128, 32])), nothing),
    "TDK414": (cfg(PIPE, lambda c: c.output.add(name="never", data_type=pb.TYPE_FP32, dims=[1])), nothing),
    "TDK415": (step(0, lambda s: s.input_map.__setitem__("text", "output")), nothing),
    "TDK416": (step(0, lambda s: setattr(s, "model_name", PIPE)), nothing),
    # two decoupled producers feeding one step vs one decoupled producer
    "TDK417": (both(cfg(TOK, _decoupled), cfg(PIPE, _split_tokenizer)), both(cfg(TOK, _decoupled))),
    "TDK501": (write(f"{IC}/1/model.onnx", b"not onnx at all"), nothing),
    "TDK502": (cfg(IC, lambda c: setattr(c.input[0], "name", "pixels")), nothing),
    "TDK503": (write(f"{IC}/1/model.onnx", onnx_model([("input", "FP32", ["b", 3, 224, 224]), ("extra", "FP32", ["b", 1])], [("logits", "FP32", ["b", 11])])),
               write(f"{IC}/1/model.onnx", onnx_model([("input", "FP32", ["b", 3, 224, 224])], [("logits", "FP32", ["b", 11])]))),
    "TDK504": (cfg(IC, lambda c: setattr(c.input[0], "data_type", pb.TYPE_FP16)), nothing),
    "TDK505": (cfg(IC, lambda c: _dims(c, "input", 0, [3, 224])), nothing),
    "TDK506": (cfg(IC, lambda c: _dims(c, "input", 0, [3, 224, 225])), nothing),
    "TDK507": (write(f"{IC}/1/model.onnx", onnx_model([("input", "FP32", [4, 3, 224, 224])], [("logits", "FP32", [4, 11])])), nothing),
    "TDK508": (cfg(TC, lambda c: setattr(c.input[1], "optional", True)), nothing),
    "TDK509": (cfg(TC, lambda c: setattr(c.input[0], "allow_ragged_batch", True)),
               both(cfg(TC, lambda c: (setattr(c.input[0], "allow_ragged_batch", True), _dims(c, "input", 0, [-1]))),
                    write(f"{TC}/1/model.onnx", onnx_model([("token_ids", "INT32", ["n"]), ("attn_mask", "INT32", ["b", 128])], [("output", "FP32", ["b", 128, 32]), ("pooled_output", "FP32", ["b", 32])])))),
    "TDK510": (cfg(IC, lambda c: (c.ClearField("dynamic_batching"), c.sequence_batching.control_input.add(name="START").control.append(START))),
               both(cfg(IC, lambda c: (c.ClearField("dynamic_batching"), c.sequence_batching.control_input.add(name="START").control.append(START))),
                    write(f"{IC}/1/model.onnx", onnx_model([("input", "FP32", ["b", 3, 224, 224]), ("START", "INT32", ["b", 1])], [("logits", "FP32", ["b", 11])])))),
    "TDK511": (write(f"{IC}/1/model.onnx", structured_onnx("if-without-else", ("input", "FP32", ["b", 3, 224, 224]), ("logits", "FP32", ["b", 11]))),
               write(f"{IC}/1/model.onnx", structured_onnx("if", ("input", "FP32", ["b", 3, 224, 224]), ("logits", "FP32", ["b", 11])))),
    "TDK512": (write(f"{IC}/1/model.onnx", structured_onnx("cycle", ("input", "FP32", ["b", 3, 224, 224]), ("logits", "FP32", ["b", 11]))), nothing),
    "TDK223": (cfg(IC, lambda c: _dims(c, "input", 0, [3, 2**62, 224])), cfg(IC, lambda c: _dims(c, "input", 0, [3, 224, 224]))),
}  # fmt: skip


def _codes(repo: Path, fix: Fix) -> set[str]:
    fix(repo)
    return {f.code for f in validate_paths([repo])}


@pytest.fixture
def copy(sample_repo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample_repo, tmp_path / "repo"))


def test_every_rule_has_a_fixture() -> None:
    # the target rules: test_target.py; the LLM engine rules: tests/validate/llm
    assert set(FIXTURES) == set(RULES) - TARGET_CODES - ENGINE_CODES


@pytest.mark.parametrize("code", sorted(FIXTURES))
def test_failing_fixture(copy: Path, code: str) -> None:
    bad, _ = FIXTURES[code]
    if code == "TDK105":
        bad(copy)
        codes = {f.code for f in validate_paths([copy, copy.parent / "other"])}
    else:
        codes = _codes(copy, bad)
    assert code in codes


@pytest.mark.parametrize("code", sorted(FIXTURES))
def test_passing_fixture(copy: Path, code: str) -> None:
    _, good = FIXTURES[code]
    assert code not in _codes(copy, good)
