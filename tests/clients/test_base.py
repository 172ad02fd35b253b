"""The InferenceTarget contract: signature checks, tritonclient's codec, CLI input parsing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from infra.clients.base import (
    InferenceTarget,
    PreparedRequest,
    RawResponse,
    check_inputs,
    header_length_from_content_type,
)
from infra.clients.inputs import example_inputs, parse_input, text_inputs
from packager.manifest import ManifestModel, TensorSpec
from tdk.errors import UsageError

MODEL = ManifestModel(
    target_model="text-0.tar.gz", name="text-0", source="text", copy=0, sha256="", size=0,
    archive="mme/text-0.tar.gz", backend="onnxruntime", platform="", max_batch_size=8,
    inputs=(TensorSpec("ids", "INT32", (4,)), TensorSpec("text", "BYTES", (1,))),
    outputs=(TensorSpec("score", "FP32", (2,)),),
)  # fmt: skip


class EchoTarget(InferenceTarget):
    """Answers with what Triton would: the request's inputs turned into a response body."""

    def send(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        header = json.loads(request.body[: request.header_length or len(request.body)])
        ids = header["inputs"][0]
        assert ids["name"] == "ids" and ids["datatype"] == "INT32"
        score = np.array([[0.25, 0.75]] * ids["shape"][0], dtype=np.float32)
        body = {
            "outputs": [
                {
                    "name": "score",
                    "datatype": "FP32",
                    "shape": list(score.shape),
                    "data": score.ravel().tolist(),
                }
            ]
        }
        return RawResponse(json.dumps(body).encode(), None)


def test_prepare_binary_and_json_bodies() -> None:
    target = EchoTarget()
    inputs = {"ids": np.arange(8, dtype=np.int32).reshape(2, 4), "text": np.array([["a"], ["b"]])}
    binary = target.prepare(MODEL, inputs)
    assert binary.header_length is not None
    assert binary.content_type == (
        f"application/vnd.sagemaker-triton.binary+json;json-header-size={binary.header_length}"
    )
    header = json.loads(binary.body[: binary.header_length])
    assert [i["parameters"]["binary_data_size"] for i in header["inputs"]] == [32, 10]
    plain = target.prepare(MODEL, inputs, binary=False)
    assert plain.header_length is None and plain.content_type == "application/json"
    document = json.loads(plain.body)
    assert document["inputs"][0]["data"] == list(range(8))
    assert document["outputs"] == [{"name": "score", "parameters": {"binary_data": False}}]
    assert target.decode(MODEL, target.send(MODEL, plain))["score"].shape == (2, 2)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"ids": np.zeros((1, 4)), "text": np.array([["a"]]), "x": np.zeros(1)},
            "no input named x",
        ),
        ({"ids": np.zeros((1, 4), np.int32)}, "'text' is missing"),
        ({"ids": np.zeros((1, 5), np.int32), "text": np.array([["a"]])}, "expected [-1, 4]"),
        ({"ids": np.zeros((9, 4), np.int32), "text": np.array([["a"]] * 9)}, "max_batch_size 8"),
        ({"ids": np.array([["a"] * 4]), "text": np.array([["a"]])}, "expects INT32"),
        ({"ids": np.zeros((1, 4), np.int64), "text": np.array([["a"]])}, "data is int64"),
        ({"ids": np.zeros((1, 4), np.int16), "text": np.array([["a"]])}, None),
    ],
    ids=["unknown", "missing", "shape", "batch", "dtype", "narrowing", "widening-ok"],
)
def test_wrong_signature_caught_before_sending(
    inputs: dict[str, np.ndarray], message: str | None
) -> None:
    if message is None:  # a lossless conversion is done, not refused
        assert check_inputs(MODEL, inputs)["ids"].dtype == np.int32
        return
    with pytest.raises(UsageError) as info:
        check_inputs(MODEL, inputs)
    assert message in str(info.value)


def test_header_length_from_content_type() -> None:
    kind = "application/vnd.sagemaker-triton.binary+json;json-header-size=123"
    assert header_length_from_content_type(kind) == 123
    assert header_length_from_content_type("application/json") is None


def test_cli_inputs_get_a_batch_dimension(tmp_path: Path) -> None:
    name, ids = parse_input(MODEL, "ids=[1, 2, 3, 4]")
    assert name == "ids" and ids.shape == (1, 4)
    np.save(tmp_path / "ids.npy", np.ones((3, 4), np.int32))
    assert parse_input(MODEL, f"ids=@{tmp_path / 'ids.npy'}")[1].shape == (3, 4)
    assert text_inputs(MODEL, "hi")["text"].tolist() == [[b"hi"]]
    with pytest.raises(UsageError, match="no such input"):
        parse_input(MODEL, "nope=[1]")
    arrays = example_inputs(MODEL, batch=2)
    assert set(check_inputs(MODEL, arrays)) == {"ids", "text"}
