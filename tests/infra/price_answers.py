"""A local HTTP server answering a price fetcher as a broken API would (an HTML page, a 403,
an empty or non-finite body), and the check that the fetcher refused it in one line, writing
nothing (issue 47 item 7)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HTML = b"<!DOCTYPE html><html><body>Sign in to continue</body></html>"
#: the answers every API may give: name -> (HTTP status, body)
COMMON = {"html": (200, HTML), "403": (403, b"Forbidden"), "empty": (200, b"")}


class PriceServer:
    def __init__(self) -> None:
        self.answer = (200, b"")
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                status, body = owner.answer
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture(scope="module")
def price_server() -> Iterator[PriceServer]:
    running = PriceServer()
    thread = threading.Thread(target=running.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.httpd.shutdown()
        running.httpd.server_close()
        thread.join()


def assert_refused(code: int, err: str, tmp_path: Path) -> str:
    """The fetcher exited 1 with one ``error: ...; nothing written`` line and wrote nothing;
    that line."""
    lines = err.strip().splitlines()
    assert code == 1, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert lines[0].endswith("; nothing written") and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
    return lines[0]
