"""The local endpoint end to end: real Triton, real HTTP, boto3 ``sagemaker-runtime`` client."""

from __future__ import annotations

import http.client
import os
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from botocore.exceptions import ClientError

from infra.clients.base import RawResponse, header_length_from_content_type
from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.targets.local.model_state import LOAD_PHASES
from tests.local.local_helpers import Endpoint

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def target(endpoint: Endpoint) -> Iterator[SageMakerRuntimeTarget]:
    client = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    yield client
    client.close()


def _error(call: Any) -> tuple[str, int, dict[str, Any]]:
    with pytest.raises(ClientError) as info:
        call()
    response: dict[str, Any] = dict(info.value.response)
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response


def test_first_request_loads_second_hits(
    endpoint: Endpoint, target: SageMakerRuntimeTarget
) -> None:
    model = endpoint.manifest.by_target_model("text_classifier-0.tar.gz")
    before = endpoint.status()["metrics"]
    target.infer(model, example_inputs(model))
    after_first = endpoint.status()
    assert model.target_model in after_first["loaded"]
    assert (
        after_first["metrics"]["ModelLoadingWaitTime"]["count"]
        == before["ModelLoadingWaitTime"]["count"] + 1
    )
    assert after_first["metrics"]["ModelDownloadingTime"]["count"] >= 1
    target.infer(model, example_inputs(model))
    after_second = endpoint.status()["metrics"]
    assert after_second["Invocations"] == before["Invocations"] + 2
    # SageMaker's ModelCacheHit: a 0/1 sample per request, reported as the ratio (average)
    samples = before["ModelCacheHitSamples"]
    hits = round(before["ModelCacheHit"] * samples)
    assert after_second["ModelCacheHitSamples"] == samples + 2
    assert after_second["ModelCacheHit"] == (hits + 1) / (samples + 2)


def test_a_cold_request_says_the_load_it_waited_for(endpoint: Endpoint) -> None:
    """A cold answer carries its load's download and Triton load times (what bench/mme_k8s.py
    compares each cold request with); a warm one does not."""
    loaded = set(endpoint.status()["loaded"])
    model = next(m for m in endpoint.manifest.models if m.target_model not in loaded)
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True)
    request = target.prepare(model, example_inputs(model))
    headers = {
        "Content-Type": request.content_type,
        "X-Amzn-SageMaker-Target-Model": model.target_model,
    }
    answers = []
    for _ in range(2):
        conn = http.client.HTTPConnection("127.0.0.1", int(endpoint.url.rsplit(":", 1)[1]))
        conn.request("POST", "/invocations", request.body, headers)
        response = conn.getresponse()
        response.read()
        conn.close()
        assert response.status == 200
        answers.append({name.lower(): value for name, value in response.getheaders()})
    cold, warm = answers
    assert cold["x-tdk-model-cache-hit"] == "0" and warm["x-tdk-model-cache-hit"] == "1"
    load = [x for x in endpoint.status()["recent_loads"] if x["target_model"] == model.target_model]
    assert float(cold["x-tdk-model-load-ms"]) == pytest.approx(load[-1]["load_ms"], abs=0.01)
    assert float(cold["x-tdk-model-download-ms"]) == pytest.approx(
        load[-1]["download_ms"], abs=0.01
    )
    assert "x-tdk-model-load-ms" not in warm and "x-tdk-model-download-ms" not in warm
    # where the cold request's time went, phase by phase (bench/mme_k8s.py's cold_phases)
    pairs = (item.partition("=") for item in cold["x-tdk-model-load-phases"].split(";"))
    phases = {phase: float(ms) for phase, _, ms in pairs}
    assert list(phases) == ["wait", *LOAD_PHASES, "infer"]
    assert all(ms >= 0 for ms in phases.values())
    for phase in LOAD_PHASES:
        assert phases[phase] == pytest.approx(load[-1][f"{phase}_ms"], abs=0.01)
    assert phases["wait"] >= phases["download"] + phases["extract"] + phases["load"] - 0.01
    assert "x-tdk-model-load-phases" not in warm


@pytest.mark.parametrize("binary", [True, False], ids=["binary+json", "json"])
def test_outputs_equal_onnxruntime(
    endpoint: Endpoint, target: SageMakerRuntimeTarget, onnx_reference: Any, binary: bool
) -> None:
    for name in ("text_classifier-1.tar.gz", "image_classifier-0.tar.gz"):
        model = endpoint.manifest.by_target_model(name)
        inputs = example_inputs(model, batch=2, seed=7)
        got = target.infer(model, inputs, binary=binary)
        feeds = {
            k: v.astype(np.int32 if v.dtype.kind == "i" else v.dtype) for k, v in inputs.items()
        }
        expected = onnx_reference(model.source, feeds)
        assert set(got) == set(expected)
        for key, value in expected.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["slow-pieces", "chunked"])
def test_body_in_pieces_or_chunked_gives_the_same_outputs(
    endpoint: Endpoint, target: SageMakerRuntimeTarget, mode: str
) -> None:
    """Many small body reads (the server's receive path) and chunked bodies stay byte-exact."""
    model = endpoint.manifest.by_target_model("image_classifier-0.tar.gz")
    inputs = example_inputs(model, batch=2, seed=3)
    expected = target.infer(model, inputs)
    request = target.prepare(model, inputs)
    parts = [request.body[i : i + 7001] for i in range(0, len(request.body), 7001)]
    headers = {
        "Content-Type": request.content_type,
        "X-Amzn-SageMaker-Target-Model": model.target_model,
    }
    port = int(endpoint.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    path = "/endpoints/local/invocations"
    if mode == "chunked":
        conn.request("POST", path, body=iter(parts), headers=headers, encode_chunked=True)
    else:
        conn.putrequest("POST", path)
        for name, text in headers.items():
            conn.putheader(name, text)
        conn.putheader("Content-Length", str(len(request.body)))
        conn.endheaders()
        for index, part in enumerate(parts):
            conn.send(part)
            if index % 8 == 0:
                time.sleep(0.002)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    assert response.status == 200, body[:300]
    length = header_length_from_content_type(response.getheader("Content-Type", ""))
    got = target.decode(model, RawResponse(body, length))
    assert set(got) == set(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(got[key], value)


def test_ensemble_equals_tokenizer_then_onnxruntime(
    endpoint: Endpoint, target: SageMakerRuntimeTarget, onnx_reference: Any
) -> None:
    pipeline = endpoint.manifest.by_target_model("text_pipeline-0.tar.gz")
    tokenizer = endpoint.manifest.by_target_model("tokenizer-0.tar.gz")
    text = {"text": np.array([[b"Triton serves models"]], dtype=object)}
    tokens = target.infer(tokenizer, text)
    got = target.infer(pipeline, text)
    expected = onnx_reference("text_classifier", tokens)
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5)


def test_lru_unloads_least_recently_used_at_k_plus_1(
    endpoint: Endpoint, target: SageMakerRuntimeTarget
) -> None:
    names = ("image_classifier-0.tar.gz", "image_classifier-1.tar.gz", "tokenizer-1.tar.gz")
    a, b, c = (endpoint.manifest.by_target_model(name) for name in names)
    for model in (a, b, a):
        target.infer(model, example_inputs(model))
    unloads = endpoint.status()["metrics"]["ModelUnloads"]
    target.infer(c, example_inputs(c))
    status = endpoint.status()
    assert status["loaded"] == [c.target_model, a.target_model]
    assert status["metrics"]["ModelUnloads"] == unloads + 1
    assert status["metrics"]["LoadedModelCount"] == 2


@pytest.mark.parametrize(
    "name",
    ["nope.tar.gz", "../../etc/passwd", "/etc/passwd", "mme/tokenizer-0.tar.gz", "tokenizer-0"],
)
def test_unknown_and_path_like_target_models_refused(endpoint: Endpoint, name: str) -> None:
    client = endpoint.client()
    code, status, response = _error(
        lambda: client.invoke_endpoint(
            EndpointName="local", TargetModel=name, Body=b"{}", ContentType="application/json"
        )
    )
    assert (code, status) == ("ValidationError", 400)
    assert "not in the release" in response["Error"]["Message"]


def test_wrong_endpoint_name_refused(endpoint: Endpoint) -> None:
    client = endpoint.client()
    code, status, _ = _error(
        lambda: client.invoke_endpoint(
            EndpointName="other", TargetModel="tokenizer-0.tar.gz", Body=b"{}"
        )
    )
    assert (code, status) == ("ValidationError", 400)


def test_oversized_body_refused(endpoint: Endpoint) -> None:
    client = endpoint.client()
    body = b"x" * (6 * 1024 * 1024 + 1)
    code, status, response = _error(
        lambda: client.invoke_endpoint(
            EndpointName="local", TargetModel="tokenizer-0.tar.gz", Body=body
        )
    )
    assert (code, status) == ("ValidationError", 413)
    assert "payload limit" in response["Error"]["Message"]


def test_bad_input_is_a_model_error_with_tritons_message(endpoint: Endpoint) -> None:
    client = endpoint.client()
    body = b'{"inputs": [{"name": "nope", "shape": [1, 1], "datatype": "INT32", "data": [1]}]}'
    code, status, response = _error(
        lambda: client.invoke_endpoint(
            EndpointName="local", TargetModel="tokenizer-0.tar.gz", Body=body
        )
    )
    assert (code, status) == ("ModelError", 424)
    assert response["OriginalStatusCode"] == 400
    assert "nope" in response["OriginalMessage"]


def test_metrics_endpoint_is_prometheus_text(
    endpoint: Endpoint, target: SageMakerRuntimeTarget
) -> None:
    model = endpoint.manifest.by_target_model("tokenizer-0.tar.gz")
    target.infer(model, example_inputs(model))
    with urllib.request.urlopen(f"{endpoint.url}/metrics") as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    assert "# TYPE tdk_loaded_model_count gauge" in text
    assert 'tdk_target_model_invocations_total{target_model="tokenizer-0.tar.gz"}' in text
    for name in (
        "model_latency",
        "model_loading_wait_time",
        "model_downloading_time",
        "model_unloading_time",
    ):
        assert f"tdk_{name}_microseconds_count" in text
    assert "tdk_model_cache_hit_count" in text and "tdk_invocation4xx_errors_total" in text
    assert "tdk_model_cache_hit_sum" in text


def _listening_inodes_loopback_only(pid: int) -> list[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        link = os.readlink(f"/proc/{pid}/fd/{fd}")
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    addresses = []
    for table in ("tcp", "tcp6"):  # the tables of pid's network namespace (Triton's own)
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                addresses.append(fields[1])
    return addresses


def test_every_listener_binds_loopback(endpoint: Endpoint) -> None:
    status = endpoint.status()
    triton = _listening_inodes_loopback_only(status["triton_pid"])
    front = _listening_inodes_loopback_only(endpoint.proc.pid)
    assert len(triton) == 3  # HTTP, gRPC, metrics; no SageMaker listener
    assert front
    loopback = ("0100007F:", "0000000000000000FFFF00000100007F:")  # 127.0.0.1, ::ffff:127.0.0.1
    assert all(address.startswith(loopback) for address in triton + front), triton + front


def test_sha_mismatch_refused_and_not_cached(
    endpoint: Endpoint, target: SageMakerRuntimeTarget
) -> None:
    model = endpoint.manifest.by_target_model("tokenizer-2.tar.gz")
    archive = endpoint.store / model.archive
    original = archive.read_bytes()
    archive.write_bytes(original[:-10] + b"corrupted!")
    try:
        code, status, response = _error(
            lambda: endpoint.client().invoke_endpoint(
                EndpointName="local", TargetModel=model.target_model, Body=b"{}"
            )
        )
    finally:
        archive.write_bytes(original)
    assert (code, status) == ("ModelError", 424)
    assert "sha256" in response["Error"]["Message"]
    workdir = endpoint.state_dir / "local-local"
    assert not (workdir / "repository" / model.name).exists()
    assert not list((workdir / "staging" / "downloads").glob("*"))
    assert target.infer(model, example_inputs(model))  # the good archive loads afterwards


def test_unreachable_store_names_the_store(endpoint: Endpoint) -> None:
    model = endpoint.manifest.by_target_model("text_pipeline-2.tar.gz")
    archive = endpoint.store / model.archive
    moved = archive.with_suffix(".moved")
    shutil.move(archive, moved)
    try:
        code, status, response = _error(
            lambda: endpoint.client().invoke_endpoint(
                EndpointName="local", TargetModel=model.target_model, Body=b"{}"
            )
        )
    finally:
        shutil.move(moved, archive)
    assert (code, status) == ("ModelError", 424)
    assert f"file://{endpoint.store}/{model.archive}" in response["Error"]["Message"]
