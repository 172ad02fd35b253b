"""The front's HTTP protocol (``infra.targets.local.protocol``) under real HTTP: a large body
reaches the app as the very objects the event loop read (issue 46: no copy of it per request),
whole and in order, however it is split or pipelined; chunked and small bodies still go through
the parser; an answer given before the body is read leaves the connection serving."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from infra.targets.local.protocol import PASS_BY_FROM, protocol_class

Scope = dict[str, Any]


class Echo:
    """Reads each body whole; answers its length, sha256 and how its pieces came; answers
    ``/early`` with 413 before reading anything. Keeps every piece it was handed."""

    def __init__(self) -> None:
        self.pieces: list[bytes | memoryview] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"] == "/early":
            await self._answer(send, 413, {"early": True})
            return
        digest, length, count = hashlib.sha256(), 0, 0
        while True:
            message = await receive()
            assert message["type"] == "http.request"
            piece = message["body"]
            if piece:
                self.pieces.append(piece)
                digest.update(piece)
                length, count = length + len(piece), count + 1
            if not message["more_body"]:
                break
        await self._answer(send, 200, {"length": length, "sha256": digest.hexdigest()})

    async def _answer(self, send: Any, status: int, answer: dict[str, Any]) -> None:
        body = json.dumps(answer).encode()
        headers = [(b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def served() -> Iterator[tuple[int, Echo, list[bytes]]]:
    """A uvicorn server with the front's protocol on a loopback port; the app, and every
    ``bytes`` object the event loop handed the protocol."""
    read: list[bytes] = []

    class Recording(protocol_class(30.0, 64, 64)):  # type: ignore[misc]
        def data_received(self, data: bytes | memoryview) -> None:
            if isinstance(data, bytes):  # from the loop (a view is the protocol's own)
                read.append(data)
            super().data_received(data)

    app = Echo()
    config = uvicorn.Config(app, loop="uvloop", http=Recording, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # connections wait in the backlog until the server accepts them
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        yield sock.getsockname()[1], app, read
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


def _request(body: bytes, path: str = "/", chunked: bool = False) -> bytes:
    if chunked:
        framed = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:70_000], body[70_000:]))
        head = f"POST {path} HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head.encode() + framed + b"0\r\n\r\n"
    head = f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _answers(conn: socket.socket, count: int) -> list[tuple[int, dict[str, Any]]]:
    """``count`` responses read off ``conn`` in order: (status, JSON body)."""
    stream = conn.makefile("rb")
    found = []
    for _ in range(count):
        status = int(stream.readline().split()[1])
        length = 0
        while (line := stream.readline()) != b"\r\n":
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        found.append((status, json.loads(stream.read(length))))
    return found


def _body(size: int, seed: int) -> bytes:
    """Bytes that hold heads and blank lines too (CRLF CRLF inside a body is a body byte)."""
    piece = b"\r\n\r\nPOST / HTTP/1.1\r\n" + bytes(range(256)) * 4
    return (piece * (size // len(piece) + 1))[seed : seed + size]


def _expect(body: bytes) -> dict[str, Any]:
    return {"length": len(body), "sha256": hashlib.sha256(body).hexdigest()}


def test_a_large_body_reaches_the_app_whole_as_the_objects_the_loop_read(
    served: tuple[int, Echo, list[bytes]],
) -> None:
    port, app, read = served
    body = _body(1_500_000, 1)
    request = _request(body)
    with socket.create_connection(("127.0.0.1", port)) as conn:
        for start in range(0, len(request), 100_000):  # the body in many reads
            conn.sendall(request[start : start + 100_000])
        assert _answers(conn, 1) == [(200, _expect(body))]
    # no piece is a copy: each is an object the loop made, or a view of one
    owners = [piece.obj if isinstance(piece, memoryview) else piece for piece in app.pieces]
    assert all(any(owner is data for data in read) for owner in owners)


def test_pipelined_requests_after_a_body_that_passed_by_the_parser(
    served: tuple[int, Echo, list[bytes]],
) -> None:
    port, _, _ = served
    bodies = [_body(PASS_BY_FROM + 5_000, 2), _body(3 * PASS_BY_FROM, 3), b"small", b""]
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"".join(_request(body) for body in bodies))  # in one send
        assert _answers(conn, 4) == [(200, _expect(body)) for body in bodies]
        again = _body(PASS_BY_FROM, 4)  # the same connection serves on
        conn.sendall(_request(again))
        assert _answers(conn, 1) == [(200, _expect(again))]


def test_chunked_and_small_bodies_go_through_the_parser(
    served: tuple[int, Echo, list[bytes]],
) -> None:
    port, _, _ = served
    large, small = _body(200_000, 5), _body(PASS_BY_FROM - 1, 6)
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(_request(large, chunked=True) + _request(small))
        assert _answers(conn, 2) == [(200, _expect(large)), (200, _expect(small))]


def test_an_answer_before_the_body_leaves_the_connection_serving(
    served: tuple[int, Echo, list[bytes]],
) -> None:
    port, _, _ = served
    body = _body(4 * PASS_BY_FROM, 7)
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(_request(body, "/early") + _request(body))
        assert _answers(conn, 2) == [(413, {"early": True}), (200, _expect(body))]


def test_a_client_that_waits_for_100_continue_gets_it_then_sends_the_body(
    served: tuple[int, Echo, list[bytes]],
) -> None:
    port, _, _ = served
    body = _body(2 * PASS_BY_FROM, 8)
    head = (
        f"POST / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(head.encode())
        stream = conn.makefile("rb")
        assert stream.readline() == b"HTTP/1.1 100 Continue\r\n"  # the app asked for the body
        assert stream.readline() == b"\r\n"
        conn.sendall(body)
        assert _answers(conn, 1) == [(200, _expect(body))]


def test_a_head_split_across_reads_then_a_large_body(
    served: tuple[int, Echo, list[bytes]],
) -> None:
    port, _, _ = served
    body = _body(3 * PASS_BY_FROM, 9)
    request = _request(body)
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sendall(request[:20])  # the head's first bytes alone, then the rest of it with body
        conn.sendall(request[20:])
        assert _answers(conn, 1) == [(200, _expect(body))]
