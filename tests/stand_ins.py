"""A stand-in Triton on 127.0.0.1 for the CLI's operator commands (status, wait, metrics): it
answers ``GET /v2/health/ready``, ``POST /v2/repository/index`` (Triton's model repository
extension), ``GET /metrics`` and Prometheus' ``/api/v1/query`` (GET or POST) with their
documented shapes, over real HTTP, so the real CLI reads it as it reads a deployed Triton. Any
other stand-in server runs through ``serving``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

#: Prometheus' answer to a query that matched no series
EMPTY_QUERY = {"status": "success", "data": {"resultType": "vector", "result": []}}


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers whole bodies with a Content-Length."""

    def send_body(self, code: int, data: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, code: int, body: object) -> None:
        self.send_body(code, json.dumps(body).encode(), "application/json")

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``http://127.0.0.1:<port>``: ``handler`` served on a free port by a thread; stopped
    (and its port closed) on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


class _Triton(QuietHandler):
    ready: ClassVar[bool]
    index: ClassVar[list[dict[str, Any]]]
    metrics: ClassVar[str | None]

    def do_GET(self) -> None:
        if self.path.startswith("/api/v1/query"):
            self.send_json(200, EMPTY_QUERY)
        elif self.path == "/v2/health/ready":
            self.send_json(200 if self.ready else 503, {})
        elif self.path == "/metrics" and self.metrics is not None:
            self.send_body(200, self.metrics.encode(), "text/plain; version=0.0.4")
        else:
            self.send_json(404, {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v2/repository/index":
            self.send_json(200, self.index)
        elif self.path.startswith("/api/v1/query"):
            self.send_json(200, EMPTY_QUERY)
        else:
            self.send_json(404, {})


@contextmanager
def triton_stand_in(
    *, ready: bool, index: list[dict[str, Any]], metrics: str | None = None
) -> Iterator[str]:
    """The URL of a stand-in Triton whose readiness is ``ready``, whose repository index is
    ``index`` and whose ``/metrics`` (Prometheus text) is ``metrics`` (404 without); stopped
    on exit."""
    attributes = {"ready": ready, "index": index, "metrics": metrics}
    with serving(type("Triton", (_Triton,), attributes)) as url:
        yield url
