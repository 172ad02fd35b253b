"""The local endpoint's HTTP protocol: uvicorn's httptools one with a body path that copies
nothing, a timer on each request's line and headers, a cap on connections and a share of it per
client (``peers.client_of``: on loopback, the local user that connected).

The body path (issue 46: the front's CPU per request is a product figure on Kubernetes): uvicorn
appends each body piece to a ``bytearray`` and ``receive()`` copies it out again; httptools
hands each piece over as a new ``bytes``, one more copy (of a 600 KB image body: 7 % of the
front's CPU under ``perf``). Here ``receive()`` hands each piece over as it is, and a body of at
least ``PASS_BY_FROM`` bytes with a Content-Length passes by the parser: the head is parsed, the
bytes after it are counted against the Content-Length and handed over as the event loop read
them (a ``bytes``, or a ``memoryview`` of one), and at the body's end the next request gets a
fresh parser, as the old one would have been reset. Chunked and small bodies take the parser's
path (its ``bytes``, without uvicorn's two copies).
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from typing import Any

import httptools

from infra.targets.local.peers import SCOPE_KEY, client_of, is_owner

_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
#: a body at least this long passes by the parser
PASS_BY_FROM = 64 * 1024
_HEAD_END = b"\r\n\r\n"
#: a read is split after a head only when this much follows it (else: one parser call)
_SPLIT_FROM = 16 * 1024
#: where a head's end is looked for in a read (``bytes.find`` of 4 bytes takes 1.6 ns a byte)
_HEAD_WITHIN = 8 * 1024


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The one Content-Length of a request without Transfer-Encoding; None otherwise."""
    names = [name for name, _ in headers]
    if b"transfer-encoding" in names or names.count(b"content-length") != 1:
        return None
    value = headers[names.index(b"content-length")][1]
    return int(value) if value.isdigit() and len(value) <= 19 else None


def protocol_class(
    header_timeout: float, max_connections: int, per_client: int
) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol, passing body pieces to ``receive()`` without copying,
    closing a connection whose request line and headers take longer than ``header_timeout``
    (uvicorn has no such timer: a silent client held its connection for ever), and refusing
    connections beyond ``max_connections`` in all or ``per_client`` from one client other than
    the endpoint's own user (its benchmarks may hold many)."""
    from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

    held: Counter[str] = Counter()  # connections each client holds now

    class Cycle(RequestResponseCycle):
        """uvicorn's request cycle whose ``receive()`` hands over the body pieces as they came
        (``pieces``, oldest first; uvicorn's own ``body`` stays empty)."""

        pieces: deque[bytes | memoryview]
        waiting = 0  # bytes in ``pieces``

        async def receive(self) -> Any:
            if not self.pieces:  # uvicorn's wait: 100-continue, flow control, disconnect
                message = await super().receive()
                if message["type"] != "http.request" or not self.pieces:
                    return message
            elif self.disconnected or self.response_complete:
                return {"type": "http.disconnect"}
            piece = self.pieces.popleft()
            self.waiting -= len(piece)
            if self.pieces:
                self.message_event.set()  # the next receive() takes the next piece at once
            if self.waiting <= HIGH_WATER_LIMIT:
                self.flow.resume_reading()
            more = self.more_body or bool(self.pieces)
            return {"type": "http.request", "body": piece, "more_body": more}

    class Protocol(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _client: str | None = None  # counted in ``held`` while open
        #: bytes of the current request's body still to come past the parser (0: none)
        _body_left = 0
        #: whether the next bytes read may hold a head (not inside a body the parser reads)
        _heading = True

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            client = client_of(transport.get_extra_info("socket"))
            limited = not is_owner(client) and held[client] >= per_client
            if len(self.connections) > max_connections or limited:
                transport.write(_BUSY)
                transport.close()
                return
            self._client = client
            held[client] += 1
            self._arm()

        def _arm(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(header_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.write(_TIMED_OUT)
                self.transport.close()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()  # the next request on a kept-alive connection: its head is timed too

        def on_headers_complete(self) -> None:
            self._disarm()
            self.scope[SCOPE_KEY] = self._client  # type: ignore[literal-required]
            super().on_headers_complete()
            self._heading = False
            cycle = self.cycle
            if cycle is None or cycle.scope is not self.scope or self.parser.should_upgrade():
                return  # an upgrade: no request cycle of its own
            length = declared_length(self.headers)
            if length is not None and length >= PASS_BY_FROM:
                cycle.__class__ = Cycle  # its body comes in pieces past the parser
                assert isinstance(cycle, Cycle)
                cycle.pieces = deque()
                self._body_left = length  # the parser still takes what came with the head

        def data_received(self, data: bytes | memoryview) -> None:
            if self._body_left:
                self._pass_body(data)
                return
            # a head's end is looked for only where one may start (not inside a body)
            heading = self._heading and isinstance(data, bytes)
            end = data.find(_HEAD_END, 0, _HEAD_WITHIN) if heading else -1  # type: ignore[union-attr]
            split = end + len(_HEAD_END)
            if end < 0 or len(data) - split < _SPLIT_FROM:
                super().data_received(data)  # type: ignore[arg-type]  # httptools reads views
                return
            view = memoryview(data)  # the head to the parser, what follows it maybe not
            super().data_received(view[:split])  # type: ignore[arg-type]
            if not self.transport.is_closing():
                self.data_received(view[split:])  # the body (or the next request) after it

        def _pass_body(self, data: bytes | memoryview) -> None:
            left = self._body_left
            self._unset_keepalive_if_required()  # as uvicorn does on every read
            body, rest = (data, b"") if len(data) <= left else (data[:left], data[left:])
            self._body_left = left - len(body)
            self._take(body)
            if not self._body_left:
                # the parser still waits for the body it never saw: the next request gets a
                # fresh one, as the old one would have been after this body
                self.parser = httptools.HttpRequestParser(self)
                self._heading = True
                super().on_message_complete()
                if rest:
                    self.data_received(rest)

        def on_message_complete(self) -> None:
            self._body_left = 0  # the parser saw the whole body (it came with the head)
            self._heading = True
            super().on_message_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._client is not None:
                held[self._client] -= 1
                if not held[self._client]:
                    del held[self._client]
                self._client = None
            super().connection_lost(exc)

        def on_body(self, body: bytes) -> None:
            if self._body_left:
                self._body_left -= len(body)
            self._take(body)

        def _take(self, body: bytes | memoryview) -> None:
            """Hand a body piece to ``receive()`` as it is (uvicorn drops one that comes after
            the response, or on an upgrade); reading pauses past the high-water mark."""
            cycle = self.cycle
            if isinstance(cycle, Cycle):
                if cycle.response_complete:
                    return
                cycle.pieces.append(body)
                cycle.waiting += len(body)
                if cycle.waiting > HIGH_WATER_LIMIT:
                    self.flow.pause_reading()
                cycle.message_event.set()
                return
            if cycle.body or cycle.response_complete or self.parser.should_upgrade():
                super().on_body(body)  # type: ignore[arg-type]  # rare: appended to the rest
                return
            # uvicorn's receive() sends bytes(cycle.body): no copy when it already is bytes
            cycle.body = body  # type: ignore[assignment]
            if len(body) > HIGH_WATER_LIMIT:
                self.flow.pause_reading()
            cycle.message_event.set()

    return Protocol
