"""The local endpoint's front against slow and many clients, and its disk cache against models
that do not fit (issue 25 items 8, 9, 10): a request head has a deadline, connections a cap, and
``--cache-gb`` holds while models are loaded."""

from __future__ import annotations

import json
import socket
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.hostile.endpoint_helpers import post, read_until_closed, wait_for
from tests.local.local_helpers import Endpoint, make_release, start_endpoint, write_python_model

runner = CliRunner()
HEADER_TIMEOUT = 1.0
MAX_CONNECTIONS = 4


def _extracted_size(archive: Path) -> int:
    with tarfile.open(archive) as tar:
        return sum(member.size for member in tar if member.isfile())


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """K = 2, a disk cache that holds one model but not two."""
    from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without the Triton runtime venv
        pytest.skip(str(exc))
    repo = tmp_path_factory.mktemp("repo")
    write_python_model(repo, "sleeper")
    store = tmp_path_factory.mktemp("store")
    make_release(repo, store, copies=2)
    one = _extracted_size(store / "mme" / "sleeper-0.tar.gz")
    running = start_endpoint(
        store,
        tmp_path_factory.mktemp("state"),
        "--max-loaded-models",
        "2",
        "--cache-bytes",
        str(one * 3 // 2),
        "--header-timeout",
        str(HEADER_TIMEOUT),
        "--max-connections",
        str(MAX_CONNECTIONS),
        "--keep-alive-timeout",
        "60",
    )
    try:
        yield running
    finally:
        running.stop()


def _connect(endpoint: Endpoint) -> socket.socket:
    host, port = endpoint.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


@pytest.mark.e2e
@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /ping HTTP/1.1\r\nHost: x\r\n", b"POST /endpoints/local/invoc"],
    ids=["silent", "headers-unfinished", "request-line-unfinished"],
)
def test_a_slow_request_head_is_cut_off(endpoint: Endpoint, sent: bytes) -> None:
    with _connect(endpoint) as sock:
        sock.sendall(sent)
        answer = read_until_closed(sock, HEADER_TIMEOUT + 10)
    assert answer.startswith(b"HTTP/1.1 408"), answer


@pytest.mark.e2e
def test_a_kept_alive_connection_times_its_next_head_too(endpoint: Endpoint) -> None:
    with _connect(endpoint) as sock:
        sock.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /ping HTTP/1.1\r\n")  # then nothing more
        answer = read_until_closed(sock, HEADER_TIMEOUT + 10)
    assert answer.startswith(b"HTTP/1.1 408"), answer


@pytest.mark.e2e
def test_connections_beyond_the_cap_are_refused_then_served_again(endpoint: Endpoint) -> None:
    held = [_connect(endpoint) for _ in range(MAX_CONNECTIONS)]
    try:
        for sock in held:  # each answered once, so the front counts it; then kept alive
            sock.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        with _connect(endpoint) as extra:  # answered at once, before it sends anything
            answer = read_until_closed(extra, 60)  # a 408 if it waited for a request
        assert answer.startswith(b"HTTP/1.1 503"), answer
    finally:
        for sock in held:
            sock.close()
    wait_for(lambda: _ping(endpoint) == 200, 60, "the closed connections to be let go")


def _ping(endpoint: Endpoint) -> int:
    try:
        with _connect(endpoint) as sock:
            sock.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = sock.recv(4096)
    except OSError:  # refused at the cap: reset before the answer was read
        return 0
    return int(answer.split()[1]) if answer.startswith(b"HTTP/1.1") else 0


@pytest.mark.e2e
def test_the_disk_cache_holds_while_models_are_loaded(endpoint: Endpoint) -> None:
    def invoke(target_model: str) -> tuple[int, dict[str, str]]:
        headers = {
            "Content-Type": "application/json",
            "X-Amzn-SageMaker-Target-Model": target_model,
        }
        body = {"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [0.0]}]}
        status, document, _ = post(endpoint.url, headers, json.dumps(body).encode())
        return status, document

    assert invoke("sleeper-0.tar.gz")[0] == 200
    status, document = invoke("sleeper-1.tar.gz")  # loaded sleeper-0 holds the cache
    assert status == 424, document
    assert "disk cache" in document["message"] and "--cache-gb" in document["message"]
    assert "--cache-bytes" not in document["message"]  # `tdk local up` has no such flag
    repository = endpoint.state_dir / "local-local" / "repository"
    assert sorted(p.name for p in repository.iterdir()) == ["sleeper-0"]  # nothing extracted
    assert not list((endpoint.state_dir / "local-local" / "staging").rglob("*.tar.gz*"))
    assert endpoint.status()["loaded"] == ["sleeper-0.tar.gz"]


@pytest.mark.parametrize("value", ["1e300", "0", "-1", "2e6"])
def test_cache_gb_out_of_range_is_a_usage_error(tmp_path: Path, value: str) -> None:
    result = runner.invoke(app, ["local", "up", "--release", str(tmp_path), "--cache-gb", value])
    assert result.exit_code == 2, result.output
    assert "--cache-gb" in result.output and "--cache-bytes" not in result.output
    assert "Traceback" not in result.output
