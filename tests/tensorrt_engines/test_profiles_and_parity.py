"""Optimization profiles from the config and --shape (what trtexec takes), and the parity
comparison of a plan's outputs with ONNX Runtime's, on CPU with arrays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from infra.tensorrt_engines.pod_build import built_for, compare, read_trtexec_outputs
from packager.config import parse_config
from packager.profiles import parse_shape, profile_from_config
from tdk.errors import UsageError

BERT = """name: "bert"
backend: "onnxruntime"
max_batch_size: 32
input [
  { name: "input_ids" data_type: TYPE_INT64 dims: [ -1 ] },
  { name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] }
]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 2 ] } ]
dynamic_batching { preferred_batch_size: [ 8 ] }
"""
SEQ = ["input_ids:1,128,512", "attention_mask:1,128,512"]


def test_profile_spans_batch_one_to_max_and_the_given_sequence_range() -> None:
    profile = profile_from_config(parse_config(BERT), SEQ)
    assert profile.trtexec_args() == [
        "--minShapes='input_ids':1x1,'attention_mask':1x1",
        "--optShapes='input_ids':8x128,'attention_mask':8x128",  # the preferred batch size
        "--maxShapes='input_ids':32x512,'attention_mask':32x512",
    ]
    assert profile.at("opt") == {"input_ids": (8, 128), "attention_mask": (8, 128)}
    explicit = profile_from_config(parse_config(BERT), SEQ, opt_batch=32)
    assert explicit.at("opt")["input_ids"] == (32, 128)
    assert explicit.describe() != profile.describe()  # part of the cache key


def test_a_dynamic_dimension_without_a_range_is_refused_naming_the_input() -> None:
    with pytest.raises(UsageError) as caught:
        profile_from_config(parse_config(BERT), SEQ[:1])
    assert "attention_mask" in caught.value.message and "--shape attention_mask:" in (
        caught.value.hint or ""
    )


@pytest.mark.parametrize(
    ("shapes", "words"),
    [
        (["input_ids:128,1,512", SEQ[1]], "MIN <= OPT <= MAX"),
        (["input_ids:1x1,2x2,3x3", SEQ[1]], "declares 1 dynamic"),
        ([*SEQ, "token_type_ids:1,2,3"], "not an input"),
        ([*SEQ, SEQ[0]], "twice"),
        (["input_ids=1,2,3", SEQ[1]], "NAME:MIN,OPT,MAX"),
    ],
)
def test_bad_shapes_are_refused(shapes: list[str], words: str) -> None:
    with pytest.raises(UsageError) as caught:
        profile_from_config(parse_config(BERT), shapes)
    assert words in caught.value.message


def test_opt_batch_outside_the_config_is_refused() -> None:
    with pytest.raises(UsageError, match="max_batch_size"):
        profile_from_config(parse_config(BERT), SEQ, opt_batch=64)


def test_a_static_model_has_no_profile() -> None:
    static = parse_config(
        'name: "m" platform: "onnxruntime_onnx" max_batch_size: 0 '
        'input [ { name: "x" data_type: TYPE_FP32 dims: [ 1, 4 ] } ]'
    )
    profile = profile_from_config(static, [])
    assert profile.trtexec_args() == [] and profile.describe() == "static"


def test_two_dynamic_dimensions_take_axb() -> None:
    assert parse_shape("image:8x8,16x16,32x32") == ("image", (8, 8), (16, 16), (32, 32))


def test_parity_reports_max_errors_and_passes_within_tolerance() -> None:
    ref = {"logits": np.array([[1.0, -2.0], [0.5, 4.0]], dtype=np.float32)}
    got = {"logits": ref["logits"] + np.array([[1e-4, 0], [0, -2e-3]])}
    result = compare(got, ref, atol=1e-3, rtol=1e-3)
    assert result["passed"] and result["max_abs"] == pytest.approx(2e-3)
    assert result["max_rel"] == pytest.approx(5e-4)


def test_parity_refuses_a_plan_outside_the_tolerance() -> None:
    ref = {"logits": np.zeros((4, 2), dtype=np.float32)}
    result = compare({"logits": np.full((4, 2), 0.01)}, ref, atol=1e-3, rtol=1e-3)
    assert not result["passed"] and result["max_abs"] == pytest.approx(0.01)


def test_parity_fails_a_missing_or_reshaped_output() -> None:
    ref = {"logits": np.zeros((2, 2)), "pooled": np.zeros(3)}
    result = compare({"logits": np.zeros(5)}, ref, 1.0, 1.0)
    assert not result["passed"] and len(result["problems"]) == 2


def test_trtexec_exported_outputs_are_read_with_their_shape(tmp_path: Path) -> None:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps([{"name": "logits", "dimensions": "2x2", "values": [1, 2, 3, 4.5]}]))
    [(name, values)] = read_trtexec_outputs(path).items()
    assert name == "logits" and values.shape == (2, 2) and values[1, 1] == 4.5


def test_built_for_names_compute_tensorrt_and_release() -> None:
    assert built_for("8.6", "", "10.13.3.9", "26.05") == "8.6:10.13@26.05"
    assert built_for("8.9", "ampere+", "10.16.1", "") == "ampere+:10.16"


def test_the_tensorrt_version_is_read_from_trtexecs_log() -> None:
    from infra.tensorrt_engines.pod_build import tensorrt_version

    assert tensorrt_version("[I] TensorRT version: 10.13.3\n") == "10.13.3"
    assert tensorrt_version("&&&& RUNNING TensorRT.trtexec [TensorRT v101303] # trtexec") == (
        "10.13.3"
    )
    with pytest.raises(SystemExit, match="no TensorRT version"):
        tensorrt_version("nothing")
