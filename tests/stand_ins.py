"""A stand-in Triton on 127.0.0.1 for the CLI's operator commands (status, wait, metrics): it
answers ``GET /v2/health/ready``, ``POST /v2/repository/index`` (Triton's model repository
extension) and Prometheus' ``/api/v1/query`` (GET or POST) with their documented shapes, over
real HTTP, so the real CLI reads it as it reads a deployed Triton."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

#: Prometheus' answer to a query that matched no series
EMPTY_QUERY = {"status": "success", "data": {"resultType": "vector", "result": []}}


class _Triton(BaseHTTPRequestHandler):
    ready: ClassVar[bool]
    index: ClassVar[list[dict[str, Any]]]

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
        elif self.path == "/v2/health/ready":
            self._answer(200 if self.ready else 503, {})
        else:
            self._answer(404, {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v2/repository/index":
            self._answer(200, self.index)
        elif self.path.startswith("/api/v1/query"):
            self._answer(200, EMPTY_QUERY)
        else:
            self._answer(404, {})

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def triton_stand_in(*, ready: bool, index: list[dict[str, Any]]) -> Iterator[str]:
    """The URL of a stand-in Triton whose readiness is ``ready`` and whose repository index is
    ``index``; stopped on exit."""
    handler = type("Triton", (_Triton,), {"ready": ready, "index": index})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
