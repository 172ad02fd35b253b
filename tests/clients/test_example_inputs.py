"""Example inputs a model accepts (issue 35, row 2): integers within the range the manifest
records (the ONNX table they index, a mask's 0/1), and ``--input`` replacing any one tensor."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from infra.clients.inputs import example_inputs, with_overrides
from packager.manifest import Manifest, ManifestModel, TensorSpec
from tdk.errors import UsageError

SPECS = (
    TensorSpec("input_ids", "INT64", (-1,), range=(0, 99)),
    TensorSpec("attention_mask", "INT64", (-1,), range=(0, 1)),
    TensorSpec("token_type_ids", "INT64", (-1,), range=(0, 1)),
)
MODEL = ManifestModel(
    "bert-0.tar.gz", "bert-0", "bert", 0, "", 0, "", "onnxruntime", "", 4, SPECS,
    (TensorSpec("logits", "FP32", (3,)),),
)  # fmt: skip


@pytest.mark.parametrize("seed", range(20))
def test_integers_stay_within_the_recorded_range(seed: int) -> None:
    arrays = example_inputs(MODEL, batch=8, seed=seed)
    for spec in SPECS:
        assert spec.range is not None
        values = arrays[spec.name]
        assert values.dtype == np.int64 and values.shape == (8, 1)
        assert spec.range[0] <= values.min() and values.max() <= spec.range[1], spec.name


def test_the_range_survives_the_manifest() -> None:
    manifest = Manifest((MODEL,), "2026-11-27T00:00:00+00:00", "0")
    text = manifest.to_json()
    assert json.loads(text)["models"][0]["outputs"][0].keys() == {
        "name",
        "datatype",
        "dims",
        "optional",
    }
    assert Manifest.from_json(text).models[0].inputs == SPECS
    old = replace(MODEL, inputs=tuple(replace(s, range=None) for s in SPECS))
    assert "range" not in Manifest((old,), "2026-11-27T00:00:00+00:00", "0").to_json()


def test_an_input_replaces_one_example_at_the_examples_batch() -> None:
    arrays = with_overrides(MODEL, example_inputs(MODEL, batch=3), ["token_type_ids=[[1, 1]]"])
    assert arrays["token_type_ids"].tolist() == [[1, 1]] * 3
    assert arrays["input_ids"].shape == (3, 1)  # the others stay the examples
    with pytest.raises(UsageError, match="no such input"):
        with_overrides(MODEL, example_inputs(MODEL), ["segment_ids=[[0]]"])
