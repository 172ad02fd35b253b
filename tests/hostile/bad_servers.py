"""Real local HTTP servers that misbehave: 200 + garbage, silent, or trickling one byte a second."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.requests += 1
        if self.server.behaviour == "garbage":
            self._answer(b"garbage")
        elif self.server.behaviour == "silent":
            self.server.stop.wait()  # accepts and reads, never answers
        else:
            self._trickle()

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _trickle(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "600")
        self.end_headers()
        try:
            for _ in range(600):  # one byte a second: no single read ever waits long
                self.wfile.write(b" ")
                self.wfile.flush()
                if self.server.stop.wait(1.0):
                    return
        except OSError:
            return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.stop = threading.Event()
        self.requests = 0


@contextmanager
def bad_server(behaviour: str) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server that is ``garbage``, ``silent`` or ``trickle``."""
    server = _Server(behaviour)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join()
