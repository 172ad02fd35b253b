"""Hostile requests and options for the local endpoint: each row a clear answer, nothing changed.

Table-driven: every row is an input, the expected HTTP status (or exit code), SageMaker error code
and a message fragment; the release, the endpoint's model repository and the cwd are snapshotted
before and after, so a refused request provably loaded, wrote and deleted nothing.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from tests.hostile.endpoint_helpers import (
    post,
    read_until_closed,
    snapshot,
    stalled_request,
)
from tests.local.local_helpers import ROOT, Endpoint, make_release, start_endpoint

pytestmark = pytest.mark.e2e
BINARY = "application/vnd.sagemaker-triton.binary+json"
BODY_TIMEOUT = 10.0
KEEP_ALIVE = 1.0
MODEL = "tokenizer-0.tar.gz"
SERVE = [sys.executable, "-m", "infra.targets.local.serve"]


@pytest.fixture(scope="module")
def release(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("store")
    make_release(sample_repo, store, copies=2, only=("tokenizer", "text_classifier"))
    return store


@pytest.fixture(scope="module")
def endpoint(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    running = start_endpoint(
        release,
        tmp_path_factory.mktemp("state"),
        "--max-loaded-models",
        "2",
        "--body-timeout",
        str(BODY_TIMEOUT),
        "--capacity-timeout",
        str(BODY_TIMEOUT),
        "--keep-alive-timeout",
        str(KEEP_ALIVE),
    )
    try:
        yield running
    finally:
        running.stop()


def _unchanged(endpoint: Endpoint) -> list[Path]:
    return [endpoint.store, endpoint.state_dir / "local-local" / "repository", endpoint.cwd]


REQUESTS = [
    # (id, TargetModel header, Content-Type, body, status, SageMaker code, message fragment)
    ("header-size-abc", MODEL, f"{BINARY};json-header-size=abc", b"{}{}", 400, "abc"),
    ("header-size-negative", MODEL, f"{BINARY};json-header-size=-1", b"{}{}", 400, "'-1'"),
    ("header-size-zero", MODEL, f"{BINARY};json-header-size=0", b"{}{}", 400, "'0'"),
    ("header-size-beyond-body", MODEL, f"{BINARY};json-header-size=99", b"{}{}", 400, "'99'"),
    ("header-size-missing", MODEL, BINARY, b"{}{}", 400, "needs json-header-size"),
    (
        "header-size-5000-digits",
        MODEL,
        f"{BINARY};json-header-size={'9' * 5000}",
        b"{}",
        400,
        "'99",
    ),
    ("header-size-not-ascii", MODEL, f"{BINARY};json-header-size=\u00b2", b"{}{}", 400, "invalid"),
    ("unknown-target-model", "nope.tar.gz", "application/json", b"{}", 400, "not in the release"),
    ("path-target-model", "../../etc/passwd", "application/json", b"{}", 400, "not in the release"),
    ("no-target-model", None, "application/json", b"{}", 400, "header is required"),
    ("body-over-6mb", MODEL, "application/json", b"x" * (6 * 1024 * 1024 + 1), 413, "6 MB"),
]


@pytest.mark.parametrize(
    ("target", "content_type", "body", "status", "fragment"),
    [row[1:] for row in REQUESTS],
    ids=[row[0] for row in REQUESTS],
)
def test_bad_request_is_refused_before_anything_loads(
    endpoint: Endpoint,
    target: str | None,
    content_type: str,
    body: bytes,
    status: int,
    fragment: str,
) -> None:
    before = snapshot(*_unchanged(endpoint))
    loaded = endpoint.status()["loaded"]
    headers = {"Content-Type": content_type}
    if target is not None:
        headers["X-Amzn-SageMaker-Target-Model"] = target
    got, document, response_headers = post(endpoint.url, headers, body)
    assert got == status, document
    assert response_headers["x-amzn-errortype"] == "ValidationError"
    assert fragment in document["message"]
    if "header-size" in content_type or content_type == BINARY:
        assert "json-header-size" in document["message"]  # the message names the parameter
    assert endpoint.status()["loaded"] == loaded
    assert snapshot(*_unchanged(endpoint)) == before


def test_stalled_clients_do_not_pin_model_slots(endpoint: Endpoint) -> None:
    """K = 2 and two clients stalled mid-body on two models: a third model is still served, and
    the stalled connections get a 408 and are closed within the body timeout."""
    manifest = endpoint.manifest
    stalled = [
        stalled_request(endpoint.url, name, length=1000, sent=500)
        for name in ("tokenizer-0.tar.gz", "tokenizer-1.tar.gz")
    ]
    started = time.monotonic()
    try:
        target = SageMakerRuntimeTarget(
            "local", endpoint_url=endpoint.url, local=True, max_attempts=1
        )
        third = manifest.by_target_model("text_classifier-0.tar.gz")
        assert target.infer(third, example_inputs(third))
        served_after = time.monotonic() - started
        target.close()
        assert served_after < BODY_TIMEOUT  # served while both clients were still stalled
        for sock in stalled:
            answer = read_until_closed(sock, BODY_TIMEOUT + 10)
            assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
            assert b"did not arrive within" in answer
        assert time.monotonic() - started < BODY_TIMEOUT + 10
    finally:
        for sock in stalled:
            sock.close()
    assert "tokenizer-0.tar.gz" not in endpoint.status()["loaded"]  # never loaded for them


def test_idle_connections_are_closed(endpoint: Endpoint) -> None:
    import socket

    host, port = endpoint.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"GET /ping HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        started = time.monotonic()
        answer = read_until_closed(sock, KEEP_ALIVE + 10)
    assert answer.startswith(b"HTTP/1.1 200")  # answered, then closed once idle
    assert time.monotonic() - started >= KEEP_ALIVE * 0.5


def test_unknown_target_models_add_no_metric_labels(endpoint: Endpoint) -> None:
    def metrics() -> bytes:
        with urllib.request.urlopen(f"{endpoint.url}/metrics", timeout=30) as response:
            return bytes(response.read())

    before = metrics()
    port = int(endpoint.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for index in range(3000):
        headers = {"X-Amzn-SageMaker-Target-Model": f"bogus-{index}.tar.gz"}
        conn.request("POST", "/endpoints/local/invocations", b"{}", headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 400
    conn.close()
    after = metrics()
    assert b"bogus-" not in after
    assert len(after) - len(before) < 200  # only counter digits grew
    assert endpoint.status()["metrics"]["Invocation4XXErrors"] >= 3000


# -- options of `tdk local up` -------------------------------------------------------------------

UP_ROWS = [
    # (id, extra args, fragment)
    ("name-path-traversal", ["--endpoint", "/../../../tmp/x"], "not a valid endpoint name"),
    ("name-with-slash", ["--endpoint", "a/b"], "not a valid endpoint name"),
    ("name-empty", ["--endpoint", ""], "not a valid endpoint name"),
    ("name-64-chars", ["--endpoint", "a" * 64], "not a valid endpoint name"),
    ("name-trailing-hyphen", ["--endpoint", "ab-"], "not a valid endpoint name"),
    ("port-70000", ["--port", "70000"], "--port 70000"),
    ("port-negative", ["--port", "-1"], "--port -1"),
    ("max-loaded-zero", ["--max-loaded-models", "0"], "--max-loaded-models 0"),
    ("body-timeout-zero", ["--body-timeout", "0"], "--body-timeout 0"),
]


@pytest.mark.parametrize(
    ("args", "fragment"), [row[1:] for row in UP_ROWS], ids=[row[0] for row in UP_ROWS]
)
def test_bad_up_options_exit_2_and_touch_nothing(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    fragment: str,
) -> None:
    state = tmp_path / "state"
    (state / "local-x").mkdir(parents=True)
    (state / "local-x" / "keep.txt").write_text("user data")
    monkeypatch.setenv("TDK_STATE_DIR", str(state))
    cwd = tmp_path / "cwd"  # an empty working directory: anything written there shows
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    escaped = Path("/tmp/x").exists()
    before = snapshot(state, release, cwd)
    result = CliRunner().invoke(app, ["local", "up", "--release", str(release), "-d", *args])
    assert result.exit_code == 2, result.output
    assert fragment in result.output
    assert "Traceback" not in result.output
    assert snapshot(state, release, cwd) == before
    assert Path("/tmp/x").exists() == escaped


def test_serve_with_bad_port_is_a_message_not_a_traceback(release: Path) -> None:
    done = subprocess.run(
        [*SERVE, "--release", str(release), "--port", "70000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--port 70000 is not a TCP port" in done.stderr
    assert "Traceback" not in done.stderr


def test_workdir_not_ours_is_refused_and_kept(release: Path, tmp_path: Path) -> None:
    """`--workdir` at a folder the endpoint did not create: refused before anything is deleted."""
    work = tmp_path / "mine"
    (work / "repository").mkdir(parents=True)
    (work / "repository" / "notes.txt").write_text("the user's file")
    (work / "staging").mkdir()
    before = snapshot(work)
    done = subprocess.run(
        [*SERVE, "--release", str(release), "--port", "0", "--workdir", str(work)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TDK_STATE_DIR": str(tmp_path / "state")},
    )
    assert done.returncode == 1, done.stderr
    assert "was not created by a tdk local endpoint" in done.stderr
    assert snapshot(work) == before
