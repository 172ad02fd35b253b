"""The generate client against canned servers: every event checked, a cut stream is an error."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from infra.clients.base import InvokeFailed
from infra.clients.generate import GenerateClient, StreamError, sse_data
from tdk.errors import EndpointError, UsageError

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(text: str) -> bytes:
    return _chunk(b'data: {"model_name":"m","text_output":"%s"}\n\n' % text.encode())


@pytest.fixture()
def canned() -> Iterator[list[bytes]]:
    """A server that answers each connection with the next bytes of the list, then closes."""
    answers: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                answer = answers.pop(0) if answers else b""
                if answer == b"HANG":
                    stop.wait(10)
                    continue
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    answers.append(str(server.getsockname()[1]).encode())  # the port, for the test to read
    try:
        yield answers
    finally:
        stop.set()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass  # wakes accept() so the thread sees stop
        server.close()
        thread.join(5)


def _client(answers: list[bytes], timeout: float = 5.0) -> GenerateClient:
    port = int(answers.pop(0))
    return GenerateClient(f"http://127.0.0.1:{port}", "m", timeout)


def test_complete_stream(canned: list[bytes]) -> None:
    canned.append(HEAD + _event("a") + _event(" b") + _chunk(b": keep-alive\n\n") + b"0\r\n\r\n")
    seen: list[str] = []
    result = _client(canned).generate("p", 2, True, seen.append)
    assert (result.text, result.chunks, result.output_tokens) == ("a b", 2, 2)
    assert seen == ["a", " b"] and result.ttft_ms <= result.total_ms


def test_stream_cut_before_its_end_is_an_error(canned: list[bytes]) -> None:
    canned.append(HEAD + _event("a") + _event(" b"))  # no terminating chunk: connection cut
    with pytest.raises(StreamError, match="broke off"):
        _client(canned).generate("p", 4, True)


@pytest.mark.parametrize(
    ("event", "match"),
    [
        (_chunk(b'data: {"error":"engine died"}\n\n'), "engine died"),
        (_chunk(b"data: not json\n\n"), "not JSON"),
        (_chunk(b"data: [1, 2]\n\n"), "not a JSON object"),
        (_chunk(b'data: {"text_output": 3}\n\n'), "no text output"),
        (_chunk(b'data: {"text_output":"a"}\n'), "inside an event"),
    ],
)
def test_bad_events_are_errors(canned: list[bytes], event: bytes, match: str) -> None:
    canned.append(HEAD + _event("a") + event + b"0\r\n\r\n")
    with pytest.raises(StreamError, match=match):
        _client(canned).generate("p", 4, True)


def test_stream_without_text_is_an_error(canned: list[bytes]) -> None:
    canned.append(HEAD + b"0\r\n\r\n")
    with pytest.raises(StreamError, match="without any text"):
        _client(canned).generate("p", 4, True)


def test_refusal_carries_tritons_message(canned: list[bytes]) -> None:
    body = b'data: {"error":"max_tokens too large"}\n\n'
    canned.append(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    with pytest.raises(InvokeFailed, match="400: max_tokens too large"):
        _client(canned).generate("p", 4, True)


def test_deadline_bounds_the_whole_exchange(canned: list[bytes]) -> None:
    canned.append(b"HANG")
    with pytest.raises(EndpointError, match=r"no complete answer within 0\.3 s"):
        _client(canned, timeout=0.3).generate("p", 4, True)


def test_non_stream_answer(canned: list[bytes]) -> None:
    body = b'{"model_name":"m","text_output":"one two three","finish_reason":"length"}'
    canned.append(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    result = _client(canned).generate("p", 3, False)
    assert (result.text, result.chunks, result.output_tokens) == ("one two three", 1, 3)
    assert result.finish_reason == "length"


def test_sse_data_joins_multiline_data() -> None:
    lines = iter([b"data: a\n", b"data: b\n", b"\n", b"id: 1\n", b"data:c\n", b"\n"])
    assert list(sse_data(lines)) == [b"a\nb", b"c"]


def test_url_must_be_http() -> None:
    with pytest.raises(UsageError, match="not an HTTP address"):
        GenerateClient("ftp://x", "m")
