"""Decoupled (LLM) copies on sagemaker-ic: the component's Triton runs in the SageMaker generate
mode on the release's repository/ (Pulumi mocks, CreateModel checked with botocore), an image
without that mode is refused before any resource, and ``tdk invoke --prompt`` reaches the
component through InvokeEndpointWithResponseStream (requests checked with botocore's model)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.exceptions import ClientError
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from cli.main import app
from infra.clients.base import InvokeFailed
from infra.clients.generate import StreamError
from infra.targets.sagemaker_ic import requests
from infra.targets.sagemaker_ic.stream import ComponentGenerateClient
from packager.manifest import Manifest, ManifestModel
from tdk.errors import ConfigError, UsageError
from tests.infra.pulumi_harness import run_stack
from tests.local.local_helpers import make_release

STACK = "sagemaker-ic-dev"
MODEL = "aws:sagemaker/model:Model"
COMPONENT = "aws-native:sagemaker:InferenceComponent"
SESSION = botocore.session.get_session()
runner = CliRunner()


def _valid(service: str, operation: str, request: dict[str, Any]) -> None:
    shape = SESSION.get_service_model(service).operation_model(operation).input_shape
    assert shape is not None
    report = ParamValidator().validate(request, shape)
    assert not report.has_errors(), report.generate_report()


def _decoupled_release(sample_repo: Path, dest: Path) -> tuple[Manifest, str]:
    """A release whose first copy was packaged without an mme/ archive (decoupled)."""
    manifest = make_release(sample_repo, dest, copies=1)
    first = manifest.models[0]
    left = replace(first, archive="", sha256="", mme_left_out="decoupled: MME cannot serve it")
    manifest = replace(manifest, models=(left, *manifest.models[1:]))
    (dest / "manifest.json").write_text(manifest.to_json())
    return manifest, first.name


def test_decoupled_copy_serves_generate_from_the_repository(
    tmp_path: Path, sample_repo: Path, s3_release: Callable[[Path], str]
) -> None:
    manifest, llm = _decoupled_release(sample_repo, tmp_path)
    run = run_stack(STACK, {"sagemakerIcModels": [], "releaseUrl": s3_release(tmp_path)})
    release = run.outputs["releaseUrl"]
    containers = {}
    for model in run.of_type(MODEL):
        request = requests.create_model(model.inputs, model.name)
        _valid("sagemaker", "CreateModel", request)
        container = model.inputs["primaryContainer"]
        if "modelDataSource" in container:
            assert request["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]["S3Uri"]
        containers[container["environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"]] = container
    assert set(containers) == {m.name for m in manifest.models}
    served = containers.pop(llm)
    assert "modelDataUrl" not in served
    assert served["modelDataSource"]["s3DataSources"] == [
        {
            "s3Uri": f"{release}/repository/",
            "s3DataType": "S3Prefix",
            "compressionType": "None",
        }
    ]
    assert served["environment"]["SAGEMAKER_TRITON_INFERENCE_TYPE"] == "generate_stream"
    (policy,) = run.of_type("aws:iam/rolePolicy:RolePolicy")
    statements = {st["Sid"]: st for st in json.loads(policy.inputs["policy"])["Statement"]}
    readable = statements["ReadReleaseArchives"]["Resource"]
    assert any(r.endswith("/repository/*") for r in readable)
    assert any(r.endswith("/mme/*") for r in readable)
    for copy, container in containers.items():  # the others keep their archives, infer mode
        assert container["modelDataUrl"] == f"{release}/mme/{copy}.tar.gz"
        assert "SAGEMAKER_TRITON_INFERENCE_TYPE" not in container["environment"]


def test_image_without_generate_mode_is_refused_before_any_resource(
    tmp_path: Path, sample_repo: Path, s3_release: Callable[[Path], str]
) -> None:
    _, llm = _decoupled_release(sample_repo, tmp_path)
    overrides = {
        "sagemakerIcModels": [],
        "releaseUrl": s3_release(tmp_path),
        "sagemakerTritonVersion": "24.09",
    }
    run = run_stack(STACK, overrides, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert llm in str(run.error) and "25.03" in str(run.error)
    assert "sagemaker_server.cc" in str(run.error) and "25.03" in run.error.hint
    assert not run.of_type(COMPONENT) and not run.of_type(MODEL)


def _event(text: str, final: bool = False) -> bytes:
    body: dict[str, Any] = {"model_name": "llm-0", "text_output": text}
    if final:
        body["finish_reason"] = "length"
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class FakeRuntime:
    """sagemaker-runtime that checks each request against botocore's model and answers the
    given payload parts (split at arbitrary byte boundaries, as the event stream may)."""

    def __init__(self, parts: list[dict[str, Any]] | ClientError) -> None:
        self.parts = parts
        self.requests: list[dict[str, Any]] = []

    def invoke_endpoint_with_response_stream(self, **request: Any) -> dict[str, Any]:
        _valid("sagemaker-runtime", "InvokeEndpointWithResponseStream", request)
        self.requests.append(request)
        if isinstance(self.parts, ClientError):
            raise self.parts
        return {"Body": iter(self.parts), "ContentType": "text/event-stream"}


def _split(data: bytes, size: int) -> list[dict[str, Any]]:
    return [{"PayloadPart": {"Bytes": data[i : i + size]}} for i in range(0, len(data), size)]


def _model(archive: str = "") -> ManifestModel:
    return ManifestModel(
        "llm_x-0.tar.gz", "llm_x-0", "llm_x", 0, "", 1, archive, "python", "", 0, (), ()
    )


def test_component_stream_is_decoded_chunk_by_chunk() -> None:
    data = _event("Hello") + _event(" there") + _event(" friend", final=True)
    runtime = FakeRuntime(_split(data, 7))
    seen: list[str] = []
    generation = ComponentGenerateClient(runtime, "ep", _model()).generate(
        "hi", 3, True, seen.append
    )
    assert generation.text == "Hello there friend" and seen == ["Hello", " there", " friend"]
    assert generation.chunks == 3 and generation.output_tokens == 3
    assert 0 <= generation.ttft_ms <= generation.total_ms
    (request,) = runtime.requests
    assert request["InferenceComponentName"] == "llm-x-0"  # the component named after the copy
    assert json.loads(request["Body"])["text_input"] == "hi"
    assert request["Accept"] == "text/event-stream"


def test_component_stream_failures_are_errors() -> None:
    broken = FakeRuntime([*_split(_event("a"), 5), {"ModelStreamError": {"Message": "oom"}}])
    with pytest.raises(StreamError, match="oom"):
        ComponentGenerateClient(broken, "ep", _model()).generate("hi", 3, True)
    cut = FakeRuntime(_split(_event("a") + b"data: {", 4))  # ends inside an event
    with pytest.raises(StreamError, match="inside an event"):
        ComponentGenerateClient(cut, "ep", _model()).generate("hi", 3, True)
    error = {"Error": {"Code": "ValidationError", "Message": "Inference Component not found"}}
    refused = FakeRuntime(ClientError(error, "InvokeEndpointWithResponseStream"))  # type: ignore[arg-type]
    with pytest.raises(InvokeFailed, match="not found") as caught:
        ComponentGenerateClient(refused, "ep", _model()).generate("hi", 3, True)
    assert caught.value.code == "ValidationError"
    with pytest.raises(UsageError, match="not a decoupled model"):
        ComponentGenerateClient(FakeRuntime([]), "ep", _model("mme/llm_x-0.tar.gz"))


def test_invoke_prompt_on_sagemaker_ic(
    tmp_path: Path, sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI path: --target sagemaker-ic finds the component's own route (no --url)."""
    from infra.targets.sagemaker_ic import runtime as ic_runtime

    _, llm = _decoupled_release(sample_repo, tmp_path)
    fake = FakeRuntime(_split(_event("one") + _event(" two", final=True), 9))

    class Target:
        def __init__(self, endpoint: str, region: str | None, timeout: float) -> None:
            self.client = fake

    monkeypatch.setattr(ic_runtime, "InferenceComponentTarget", Target)
    where = ["--target", "sagemaker-ic", "--endpoint", "llm-ep", "--region", "us-east-1"]
    args = [*where, "--release", f"file://{tmp_path}", "--target-model", llm, "--prompt", "hi"]
    result = runner.invoke(app, ["invoke", *args, "--stream", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["text"] == "one two" and summary["chunks"] == 2
    assert fake.requests[0]["EndpointName"] == "llm-ep"
