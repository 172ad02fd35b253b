"""A bad release shows on gke/eks (issue 40, row 4): Triton's repository index names the model
that failed to load and why; ``endpoint status`` shows it, ``endpoint wait`` fails at once,
``metrics`` counts it. A stand-in Triton on 127.0.0.1 answers with the documented shapes of
``/v2/health/ready`` and ``POST /v2/repository/index`` (Triton's model repository extension,
https://github.com/triton-inference-server/server/blob/main/docs/protocol/extension_model_repository.md,
checked 2026-11-27); the real CLI reads it over real HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from cli.main import app

REASON = "load failed for model 'bert-1': version 1 is at UNAVAILABLE state: Internal: oops"
INDEX = [
    {"name": "bert-0", "version": "1", "state": "READY"},
    {"name": "bert-1", "version": "1", "state": "UNAVAILABLE", "reason": REASON},
]
EMPTY_QUERY = {"status": "success", "data": {"resultType": "vector", "result": []}}


class _Triton(BaseHTTPRequestHandler):
    def _answer(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/api/v1/query"):
            self._answer(200, EMPTY_QUERY)
        else:
            self._answer(503 if self.path == "/v2/health/ready" else 404, {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v2/repository/index":
            self._answer(200, INDEX)
        elif self.path.startswith("/api/v1/query"):
            self._answer(200, EMPTY_QUERY)
        else:
            self._answer(404, {})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def triton() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Triton)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


@pytest.mark.parametrize("stack", ["gke-dev", "eks-dev"])
def test_status_wait_and_metrics_show_the_model_that_failed(triton: str, stack: str) -> None:
    where = ["--stack", stack, "--url", triton]
    status = CliRunner().invoke(app, ["endpoint", "status", *where, "--json"])
    assert status.exit_code == 0, status.output
    state = json.loads(status.stdout)
    assert state["status"] == "Failed" and not state["ready"]
    assert state["failed"] == {"bert-1 v1": REASON}
    wait = CliRunner().invoke(app, ["endpoint", "wait", *where, "--timeout", "600"])
    assert wait.exit_code != 0
    assert REASON in " ".join(wait.output.split())
    metrics = CliRunner().invoke(app, ["metrics", *where, "--prometheus-url", triton, "--json"])
    assert metrics.exit_code == 0, metrics.output
    figures = {m["key"]: m["value"] for m in json.loads(metrics.stdout)["metrics"]}
    assert figures["model_load_failures"] == 1
