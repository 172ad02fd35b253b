"""The local endpoint answers InvokeEndpoint's InferenceComponentName as SageMaker's
inference-component endpoints do, so the same boto3 code runs against both (real Triton)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from botocore.exceptions import ClientError

from infra.clients.base import RawResponse, header_length_from_content_type
from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.components import component_name
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.targets.sagemaker_ic.runtime import InferenceComponentTarget
from tests.local.local_helpers import Endpoint, make_release

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def release(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two copies of each sample model (8 TargetModels, not the conftest's 12): every copy is
    loaded once below, and two copies already tell the copies of one model apart."""
    store = tmp_path_factory.mktemp("store")
    make_release(sample_repo, store, copies=2)
    return store


def _invoke(endpoint: Endpoint, name: str, target: SageMakerRuntimeTarget, model: Any) -> Any:
    request = target.prepare(model, example_inputs(model))
    response = endpoint.client().invoke_endpoint(
        EndpointName="local",
        InferenceComponentName=name,
        Body=request.body,
        ContentType=request.content_type,
    )
    kind = str(response["ContentType"])
    raw = RawResponse(response["Body"].read(), header_length_from_content_type(kind), kind)
    return target.decode(model, raw)


def test_every_copy_answers_by_inference_component_name(endpoint: Endpoint) -> None:
    by_archive = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True)
    try:
        for model in endpoint.manifest.models:
            outputs = _invoke(endpoint, model.name, by_archive, model)
            expected = by_archive.infer(model, example_inputs(model))
            assert sorted(outputs) == sorted(s.name for s in model.outputs), model.name
            for name, value in expected.items():
                np.testing.assert_array_equal(outputs[name], value)
    finally:
        by_archive.close()


def test_component_names_of_the_sagemaker_ic_target_work_too(endpoint: Endpoint) -> None:
    """``text_pipeline-0`` is deployed as component ``text-pipeline-0``; the client sends that."""
    client = InferenceComponentTarget("local", endpoint_url=endpoint.url, local=True)
    try:
        model = endpoint.manifest.by_name("text_pipeline-1")
        assert component_name(model.name) == "text-pipeline-1"
        assert client.address(model) == {"InferenceComponentName": "text-pipeline-1"}
        outputs = client.infer(model, example_inputs(model))
        assert set(outputs) == {s.name for s in model.outputs}
    finally:
        client.close()


@pytest.mark.parametrize("name", ["nope-0", "text_pipeline-0.tar.gz/..", "mme/tokenizer-0"])
def test_unknown_components_are_refused_before_the_body(endpoint: Endpoint, name: str) -> None:
    with pytest.raises(ClientError) as info:
        endpoint.client().invoke_endpoint(
            EndpointName="local", InferenceComponentName=name, Body=b"{}",
            ContentType="application/json",
        )  # fmt: skip
    error = info.value.response
    assert error["Error"]["Code"] == "ValidationError"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "not in the release" in json.dumps(error["Error"])


def test_tdk_invoke_sagemaker_ic_sends_the_component_name(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tdk invoke --target sagemaker-ic --target-model <copy>`` through boto3's real client,
    pointed at the local endpoint (AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, as boto3 documents)."""
    from typer.testing import CliRunner

    from cli.main import app

    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", endpoint.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    before = endpoint.status()["metrics"]["Invocations"]
    args = ["invoke", "--target", "sagemaker-ic", "--endpoint", "local", "--region", "us-east-1"]
    args += ["--release", f"file://{endpoint.store}", "--target-model", "text_pipeline-1"]
    result = CliRunner().invoke(app, [*args, "--text", "hello there", "--json"])
    assert result.exit_code == 0, result.output
    model = endpoint.manifest.by_name("text_pipeline-1")
    assert set(json.loads(result.output)["outputs"]) == {s.name for s in model.outputs}
    assert endpoint.status()["metrics"]["Invocations"] == before + 1
