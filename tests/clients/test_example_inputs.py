"""Example inputs a model accepts (issue 35, row 2): integers within the range the manifest
records (the ONNX table they index, a mask's 0/1), and ``--input`` replacing any one tensor."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from infra.clients.inputs import example_inputs, sample_requests, with_overrides
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


def test_sample_requests_read_npz_and_json_in_name_order(tmp_path: Path) -> None:
    np.savez(tmp_path / "a.npz", input_ids=np.array([[5, 6, 7]]), token_type_ids=np.ones((1, 3)))
    (tmp_path / "b.json").write_text('{"input_ids": [1, 2], "attention_mask": [1, 0]}')
    (tmp_path / "notes.txt").write_text("ignored")
    first, second = sample_requests(MODEL, tmp_path, batch=2)
    assert first["input_ids"].tolist() == [[5, 6, 7]] * 2  # batch 1 repeated to the batch
    assert first["attention_mask"].shape == (2, 1)  # left out: the example
    assert second["input_ids"].tolist() == [[1, 2]] * 2 and second["input_ids"].dtype == np.int64


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("x.json", '{"segment": [1]}', "no input 'segment'"),
        ("x.json", "[1, 2]", "not a JSON object"),
        ("x.json", '{"input_ids": [0.5]}', "do not fit"),
        ("x.npz", "not a zip", "cannot read it"),
    ],
)
def test_bad_samples_are_refused(tmp_path: Path, name: str, content: str, message: str) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(UsageError, match=message):
        sample_requests(MODEL, tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"no \.npz or \.json"):
        sample_requests(MODEL, tmp_path / "empty")
