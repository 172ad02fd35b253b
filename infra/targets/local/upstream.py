"""A minimal pooled HTTP/1.1 client to Triton over asyncio + httptools (the front's hot path).

A request body is ``bytes``, the list of chunks the front received (written with the head in
one ``writelines``: never joined, so a large body is not copied again) or an async iterator
streamed chunk by chunk as it arrives (the head goes out with the first chunk, so Triton sees
one segment fewer); responses (small inference outputs) are collected whole.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httptools

Body = bytes | list[bytes | memoryview] | AsyncIterator[bytes]
Opener = Callable[[], Awaitable[socket.socket]]


class UpstreamError(ConnectionError):
    """Triton closed the connection or could not be reached."""


@dataclass(frozen=True)
class UpstreamResponse:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


class _Connection(asyncio.Protocol):
    """One keep-alive connection; at most one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.waiter: asyncio.Future[UpstreamResponse] | None = None
        self._headers: dict[str, str] = {}
        self._chunks: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(UpstreamError(f"bad response from Triton: {exc}"))

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        response = UpstreamResponse(
            self.parser.get_status_code(), self._headers, b"".join(self._chunks)
        )
        self._headers, self._chunks = {}, []
        if not self.parser.should_keep_alive():
            self.close()
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(response)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(UpstreamError("Triton closed the connection"))

    def _fail(self, exc: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        self.close()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


async def _write_stream(
    conn: _Connection, transport: asyncio.Transport, head: bytes, body: AsyncIterator[bytes]
) -> None:
    """Write the head with the first chunk (one send), then each chunk as it arrives."""
    pending: bytes | None = head
    async for chunk in body:
        if conn.closed:
            return
        if pending is not None:
            transport.writelines([pending, chunk])
            pending = None
        else:
            transport.write(chunk)
    if pending is not None and not conn.closed:
        transport.write(pending)


class UpstreamPool:
    """Keep-alive connections to one Triton HTTP listener."""

    def __init__(self, host: str, port: int, opener: Opener | None = None) -> None:
        self.host = host
        self.port = port
        #: opens each new connection when given (Triton in a namespace of its own)
        self.opener = opener
        self._idle: list[_Connection] = []
        self._host_header = f"Host: {host}:{port}\r\n"

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            if self.opener is not None:
                _, conn = await loop.create_connection(_Connection, sock=await self.opener())
            else:
                _, conn = await loop.create_connection(_Connection, self.host, self.port)
        except OSError as exc:
            raise UpstreamError(f"cannot reach Triton at {self.host}:{self.port}: {exc}") from exc
        return conn

    async def request(
        self,
        method: str,
        path: str,
        body: Body = b"",
        length: int | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> UpstreamResponse:
        """Send one request; a stale idle connection is retried once when the body can be sent
        again (bytes or a list of chunks)."""
        reused = bool(self._idle)
        try:
            return await self._send(method, path, body, length, headers)
        except UpstreamError:
            if not (reused and isinstance(body, bytes | list)):
                raise
            return await self._send(method, path, body, length, headers)

    async def _send(
        self,
        method: str,
        path: str,
        body: Body,
        length: int | None,
        headers: tuple[tuple[str, str], ...],
    ) -> UpstreamResponse:
        conn = self._idle.pop() if self._idle else await self._connect()
        while conn.closed:
            conn = self._idle.pop() if self._idle else await self._connect()
        if length is None:
            if isinstance(body, bytes):
                length = len(body)
            else:
                length = sum(map(len, body)) if isinstance(body, list) else 0
        lines = "".join([f"{name}: {value}\r\n" for name, value in headers])
        head = f"{method} {path} HTTP/1.1\r\n".encode() + (
            f"{self._host_header}{lines}Content-Length: {length}\r\n\r\n"
        ).encode("latin-1")
        waiter: asyncio.Future[UpstreamResponse] = asyncio.get_running_loop().create_future()
        conn.waiter = waiter
        transport = conn.transport
        assert transport is not None
        try:
            if isinstance(body, bytes):
                transport.writelines([head, body])
            elif isinstance(body, list):
                transport.writelines([head, *body])
            else:
                await _write_stream(conn, transport, head, body)
            response = await waiter
        except BaseException:
            conn.close()
            raise
        if not conn.closed:
            self._idle.append(conn)
        return response

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()
