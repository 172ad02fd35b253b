"""The model-aware part of the tune space, and config edits that keep the user's text: which
accelerator options a model gets on which server (the rest skipped with a reason), and the
textual patch of ``config.pbtxt`` proven equal to the intended ModelConfig."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.perf.tune.accel import Capabilities, is_option
from infra.perf.tune.pbtxt import patch_text, top_level_spans
from infra.perf.tune.space import Knobs, Space, apply_knobs
from infra.perf.tune.tuner import model_space
from packager.config import CONFIG_NAME, load_config, parse_config
from tdk.errors import ConfigError

CPU = Capabilities(gpu=False, backends=frozenset({"python", "onnxruntime"}), cpus=4)
GPU = Capabilities(gpu=True)


def _config(text: str) -> object:
    return parse_config(text)


ONNX = 'name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 16\n'
PLAN = 'name: "p"\nplatform: "tensorrt_plan"\nmax_batch_size: 8\n'


def test_onnx_on_a_gpu_server_tries_tensorrt_fp16_and_fp32() -> None:
    space, skipped = model_space(Space(), _config(ONNX), GPU)
    assert space.accelerators == ("", "trt-fp16", "trt-fp32")
    assert [s.option for s in skipped] == ["openvino"]
    tuned = apply_knobs(_config(ONNX), Knobs(1, 16, True, 0, (), "trt-fp16"))
    (trt,) = tuned.optimization.execution_accelerators.gpu_execution_accelerator
    assert trt.name == "tensorrt" and trt.parameters["precision_mode"] == "FP16"
    assert int(trt.parameters["max_workspace_size_bytes"]) > 0


def test_onnx_on_a_cpu_server_skips_tensorrt_and_tries_threads() -> None:
    space, skipped = model_space(Space(), _config(ONNX), CPU)
    assert space.accelerators == ("", "threads-2", "threads-4")
    reasons = {s.option: s.reason for s in skipped}
    assert "no GPU" in reasons["trt-fp16"] and "OpenVINO" in reasons["openvino"]
    tuned = apply_knobs(_config(ONNX), Knobs(1, 16, False, accelerator="threads-4"))
    assert tuned.parameters["intra_op_thread_count"].string_value == "4"
    with_openvino = Capabilities(gpu=False, backends=frozenset({"openvino"}), cpus=1)
    assert "openvino" in model_space(Space(), _config(ONNX), with_openvino)[0].accelerators


def test_a_tensorrt_plan_keeps_batch_sizes_within_its_profile() -> None:
    space, skipped = model_space(Space(max_batch_size=(4, 8, 16, 32)), _config(PLAN), GPU)
    assert space.max_batch_size == (4, 8) and space.accelerators == ("",)
    assert skipped and "tensorrt" in skipped[0].reason


def test_options_a_server_lacks_are_skipped_not_tried() -> None:
    asked = Space(accelerators=("", "trt-fp16"), auto_accelerators=False)
    space, skipped = model_space(asked, _config(ONNX), CPU)
    assert space.accelerators == ("",) and "trt-fp16" in [s.option for s in skipped]
    assert is_option("threads-3") and not is_option("threads-0") and not is_option("cuda")


def test_quick_grid_and_climb_cover_the_accelerator_dimension() -> None:
    space = Space(instances=(1,), max_batch_size=(8,), accelerators=("", "threads-2"))
    assert len(space.grid()) == 2 * 7
    assert Knobs(1, 8, True, 500, (8,), "threads-2") in space.grid()
    assert space.nearest(Knobs(1, 8, False)) == (0, 0, 0, 0, 0, 0)


COMMENTED = """# header comment
name: "image_classifier"
max_batch_size: 16  # trailing comment
input [
  {
    name: "input"  # inner comment
    data_type: TYPE_FP32
    dims: [ 3, 224, 224 ]
  }
]
output { name: "logits", data_type: TYPE_FP32, dims: 11 }
instance_group { count: 1 kind: KIND_CPU }  # first group
instance_group { count: 1 kind: KIND_CPU }
parameters { key: "s" value { string_value: "a # not a comment {" } }
backend: "onnxruntime"
"""


def test_spans_respect_strings_comments_and_nesting() -> None:
    names = [span.name for span in top_level_spans(COMMENTED)]
    assert names == [
        "name",
        "max_batch_size",
        "input",
        "output",
        "instance_group",
        "instance_group",
        "parameters",
        "backend",
    ]


def test_patch_changes_only_the_tuned_fields_and_keeps_every_comment() -> None:
    tuned = apply_knobs(parse_config(COMMENTED), Knobs(3, 32, True, 500, (32,)))
    text = patch_text(COMMENTED, tuned)
    assert parse_config(text) == tuned
    for line in COMMENTED.splitlines():
        if "max_batch_size" in line or "instance_group" in line:
            continue
        assert line in text.splitlines()
    assert "max_batch_size: 32  # trailing comment" in text
    assert text.count("instance_group") == 1 and "count: 3" in text
    assert "dynamic_batching" in text and "max_queue_delay_microseconds: 500" in text


@pytest.mark.parametrize(
    "shipped", ["", 'parameters { key: "intra_op_thread_count" value { string_value: "1" } }\n']
)
def test_patch_writes_a_threads_option_into_the_parameters_map(shipped: str) -> None:
    text = ONNX + shipped + "# kept\n"
    tuned = apply_knobs(parse_config(text), Knobs(1, 16, False, accelerator="threads-2"))
    patched = patch_text(
        text, tuned
    )  # a map field raised AttributeError; a value change was missed
    assert parse_config(patched) == tuned and "# kept" in patched
    assert 'string_value: "2"' in patched and patched.count("intra_op_thread_count") == 1


def test_patch_of_an_unchanged_config_is_the_identity(sample_repo: Path) -> None:
    path = sample_repo / "image_classifier" / CONFIG_NAME
    text = path.read_text()
    assert patch_text(text, load_config(path)) == text


def test_patch_refuses_text_it_cannot_read() -> None:
    with pytest.raises(ConfigError):
        patch_text('name: "x"\nmax_batch_size: 4\nparameters { key: "k" ', parse_config(ONNX))
