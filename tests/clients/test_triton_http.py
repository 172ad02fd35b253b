"""``tdk invoke --target eks`` against a real Triton on 127.0.0.1 serving a packaged
release's ``repository/`` tree, over HTTP (binary and JSON codecs) and gRPC."""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clients.triton_http import TritonHttpTarget
from infra.triton_runtime.runtime import RuntimeMissing, TritonProcess, find_runtime
from packager.manifest import Manifest
from tdk.errors import EndpointError, UsageError

runner = CliRunner()


class _Triton(TritonProcess):
    """The local endpoint's launcher, remembering the gRPC port it picked."""

    grpc_port = 0

    def command(self, http: int, grpc: int, metrics: int) -> list[str]:
        self.grpc_port = grpc
        return super().command(http, grpc, metrics)


@dataclass
class Served:
    store: Path
    manifest: Manifest
    http_url: str
    grpc_url: str


@pytest.fixture(scope="module")
def served(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`tdk package` two tokenizer copies, start Triton on the repository/ tree, load them."""
    try:
        runtime = find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without the Triton runtime venv
        pytest.skip(str(exc))
    store = tmp_path_factory.mktemp("release")
    result = runner.invoke(
        app,
        [
            "package",
            str(sample_repo / "tokenizer"),
            "--release",
            f"file://{store}",
            "--copies",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = Manifest.from_json((store / "manifest.json").read_text())
    triton = _Triton(runtime, store / "repository", tmp_path_factory.mktemp("triton"), False)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(triton.start())
    try:
        import tritonclient.http as httpclient

        client = httpclient.InferenceServerClient(triton.http_url.removeprefix("http://"))
        for model in manifest.models:
            client.load_model(model.name)
        client.close()
        yield Served(store, manifest, triton.http_url, f"127.0.0.1:{triton.grpc_port}")
    finally:
        loop.run_until_complete(triton.stop())
        loop.close()


def expected_tokens(text: str) -> list[int]:
    """The sample tokenizer's documented rule: CLS 1, then 2 + crc32(word) % 1022, pad 0."""
    ids = [1] + [2 + zlib.crc32(word.encode()) % 1022 for word in text.lower().split()]
    return ids + [0] * (128 - len(ids))


def _invoke(served: Served, *extra: str) -> dict:
    result = runner.invoke(
        app,
        [
            "invoke",
            "--target",
            "eks",
            "--release",
            f"file://{served.store}",
            "--target-model",
            "tokenizer-1.tar.gz",
            "--text",
            "Hello Triton world",
            "--json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_invoke_http_binary_maps_archive_to_triton_model(served: Served) -> None:
    answer = _invoke(served, "--url", served.http_url)
    assert answer["target"] == "eks"
    assert answer["target_model"] == "tokenizer-1.tar.gz"
    assert answer["model"] == "tokenizer-1"
    assert answer["outputs"]["token_ids"]["data"] == [expected_tokens("Hello Triton world")]
    assert answer["outputs"]["attn_mask"]["data"][0][:5] == [1, 1, 1, 1, 0]


def test_invoke_http_json_body(served: Served) -> None:
    answer = _invoke(served, "--url", served.http_url, "--json-body")
    assert answer["outputs"]["token_ids"]["data"] == [expected_tokens("Hello Triton world")]


def test_invoke_grpc(served: Served) -> None:
    answer = _invoke(served, "--url", served.grpc_url, "--grpc")
    assert answer["outputs"]["token_ids"]["data"] == [expected_tokens("Hello Triton world")]
    assert answer["outputs"]["token_ids"]["shape"] == [1, 128]


def test_target_sends_batches_through_the_binary_codec(served: Served) -> None:
    model = served.manifest.by_target_model("tokenizer-0.tar.gz")
    target = TritonHttpTarget(served.http_url, grpc=False)
    try:
        texts = np.array([[b"a b"], [b"c"]], dtype=np.object_)
        request = target.prepare(model, {"text": texts})
        assert request.header_length is not None  # binary+json, not plain JSON
        outputs = target.decode(model, target.send(model, request))
        second = target.infer(model, {"text": texts})  # reuses the kept-alive connection
    finally:
        target.close()
    assert outputs["token_ids"].tolist() == [expected_tokens("a b"), expected_tokens("c")]
    assert np.array_equal(second["token_ids"], outputs["token_ids"])


def test_unknown_model_on_the_server_is_an_endpoint_error(served: Served) -> None:
    model = served.manifest.by_target_model("tokenizer-0.tar.gz")
    renamed = type(model)(**{**model.__dict__, "name": "not-loaded"})
    target = TritonHttpTarget(served.http_url)
    with pytest.raises(EndpointError, match=r"HTTP 400|HTTP 404") as caught:
        target.infer(renamed, {"text": np.array([[b"x"]], dtype=np.object_)})
    target.close()
    assert "not-loaded" in str(caught.value)


def test_unreachable_server_and_bad_url_name_the_fix(served: Served) -> None:
    model = served.manifest.by_target_model("tokenizer-0.tar.gz")
    with pytest.raises(EndpointError, match="cannot reach Triton") as caught:
        TritonHttpTarget("http://127.0.0.1:9", timeout=2).infer(
            model, {"text": np.array([[b"x"]], dtype=np.object_)}
        )
    assert "port-forward" in caught.value.hint
    with pytest.raises(UsageError, match="not a Triton HTTP address"):
        TritonHttpTarget("ftp://host")


def test_cli_without_url_says_how(served: Served) -> None:
    result = runner.invoke(
        app,
        [
            "invoke",
            "--target",
            "eks",
            "--release",
            f"file://{served.store}",
            "--target-model",
            "tokenizer-0.tar.gz",
            "--text",
            "x",
        ],
    )
    assert result.exit_code == 2
    assert "--url" in result.output


def test_a_socket_timeout_that_beats_the_watchdog_is_still_the_deadline_message() -> None:
    """Under load the per-read socket timeout can fire just before the total-deadline watchdog:
    the user must still be told the deadline (seen as a bare "TimeoutError: timed out")."""
    client = TritonHttpTarget("http://127.0.0.1:9", timeout=3)
    error = client._unreachable(TimeoutError("timed out"))
    assert error.code == "timeout" and "within 3 s" in error.message
    other = client._unreachable(ConnectionRefusedError("refused"))
    assert other.code == "unreachable" and "cannot reach" in other.message
