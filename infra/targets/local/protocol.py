"""The local endpoint's HTTP protocol: uvicorn's httptools one with one change on the hot path
(a request body chunk is handed to the app as the parser's own ``bytes`` instead of being
appended to a ``bytearray`` and copied out again: two fewer copies of a 600 KB body, measured in
bench), a timer on each request's line and headers, a cap on connections and a share of it per
client (``peers.client_of``: on loopback, the local user that connected)."""

from __future__ import annotations

import asyncio
from collections import Counter

from infra.targets.local.peers import SCOPE_KEY, client_of, is_owner

_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


def protocol_class(
    header_timeout: float, max_connections: int, per_client: int
) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol, passing body chunks to ``receive()`` without copying,
    closing a connection whose request line and headers take longer than ``header_timeout``
    (uvicorn has no such timer: a silent client held its connection for ever), and refusing
    connections beyond ``max_connections`` in all or ``per_client`` from one client other than
    the endpoint's own user (its benchmarks may hold many)."""
    from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    held: Counter[str] = Counter()  # connections each client holds now

    class Protocol(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _client: str | None = None  # counted in ``held`` while open

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

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._client is not None:
                held[self._client] -= 1
                if not held[self._client]:
                    del held[self._client]
                self._client = None
            super().connection_lost(exc)

        def on_body(self, body: bytes) -> None:
            cycle = self.cycle
            if cycle.body or cycle.response_complete or self.parser.should_upgrade():
                super().on_body(body)  # rare: appends to what receive() has not taken yet
                return
            # receive() sends bytes(cycle.body): no copy when it already is bytes
            cycle.body = body  # type: ignore[assignment]
            if len(body) > HIGH_WATER_LIMIT:
                self.flow.pause_reading()
            cycle.message_event.set()

    return Protocol
