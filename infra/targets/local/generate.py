"""Triton's generate extension on the local endpoint, as GKE/EKS expose it.

``POST /v2/models/<model>/generate`` (one JSON answer) and ``.../generate_stream`` (server-sent
events, one per response of a decoupled model) are passed to the local Triton after the model is
loaded the way an invocation loads it; ``<model>`` is the Triton model name (``llm-0``) or the
TargetModel (``llm-0.tar.gz``). Events are forwarded as Triton sends them; if Triton fails
mid-stream the connection is cut without the stream's end, so the caller sees a broken stream,
never a short one that looks complete. Errors before the first byte answer in Triton's shape
(``{"error": "..."}``).

A stream ends with its client: when the caller disconnects, the connection to Triton is closed,
which cancels the request in Triton (the model sees ``request.is_cancelled()``). What Triton
sends is buffered per stream up to ``HIGH_WATER`` bytes; beyond, the front stops reading from
Triton until the caller has taken the buffer down to ``LOW_WATER`` (TCP's flow control then
holds Triton), so a slow reader costs the front a bounded amount of memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httptools

from infra.clients.triton_errors import triton_error_text
from infra.targets.local import alias
from infra.targets.local.errors import ApiError
from infra.targets.local.manager import ModelManager, stub_crashed

log = logging.getLogger("tdk.local")
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
#: bytes of Triton's answer held per stream before the front stops reading it, and resumes below
HIGH_WATER = 256 * 1024
LOW_WATER = 64 * 1024
REFUSAL_CAP = 64 * 1024  # of an error answer kept to read Triton's message

_ROUTE = re.compile(r"^/v2/models/(?P<model>[A-Za-z0-9._-]{1,255})/(?P<kind>generate(?:_stream)?)$")


@dataclass(frozen=True)
class Route:
    """One generate request's model and kind (``generate`` or ``generate_stream``)."""

    model: str
    kind: str


def route(method: str, path: str) -> Route | None:
    """The generate route ``path`` names, or None when it is not one."""
    found = _ROUTE.match(path) if method == "POST" else None
    return Route(found["model"], found["kind"]) if found else None


class StreamBroken(Exception):
    """Triton failed after the answer began: the caller's connection must be cut."""


class _Upstream(asyncio.Protocol):
    """One request to Triton whose response body is handed on chunk by chunk."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.head: asyncio.Future[tuple[int, list[tuple[bytes, bytes]]]] = (
            asyncio.get_running_loop().create_future()
        )
        self.chunks: asyncio.Queue[bytes | Exception | None] = asyncio.Queue()
        self.headers: list[tuple[bytes, bytes]] = []
        self.transport: asyncio.Transport | None = None
        self.complete = False
        self.buffered = 0  # bytes in ``chunks`` not yet taken
        self.paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(StreamBroken(f"bad response from Triton: {exc}"))

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() in (b"content-type", b"inference-header-content-length"):
            self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        if not self.head.done():
            self.head.set_result((self.parser.get_status_code(), self.headers))

    def on_body(self, body: bytes) -> None:
        self.chunks.put_nowait(body)
        self.buffered += len(body)
        if self.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def taken(self, size: int) -> None:
        """``size`` bytes went on to the caller: read from Triton again once below low water."""
        self.buffered -= size
        if self.paused and self.buffered <= LOW_WATER and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()

    def on_message_complete(self) -> None:
        self.complete = True
        self.chunks.put_nowait(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.complete:
            self._fail(StreamBroken("Triton closed the connection before the answer ended"))

    def _fail(self, exc: Exception) -> None:
        if not self.head.done():
            self.head.set_exception(exc)
        self.chunks.put_nowait(exc)
        if self.transport is not None:
            self.transport.close()


async def serve(
    manager: ModelManager, found: Route, body: bytes, send: Send, receive: Receive | None = None
) -> None:
    """Answer one generate request (the body was read whole by the front); ``receive`` tells
    when the caller disconnects."""
    target = _target_model(manager, found.model)
    if target is None:
        await _triton_error(send, 404, f"Request for unknown model: '{found.model}' is not found")
        return
    try:
        state = await manager.acquire(target)
    except ApiError as exc:
        await _triton_error(send, exc.status, exc.message)
        return
    manager.metrics.count("Invocations", target)
    refusal = bytearray()
    try:
        path = f"/v2/models/{state.triton_name}/{found.kind}"
        renamer = alias.Renamer(state.triton_name, state.entry.name) if state.aliased else None
        await _proxy(manager, path, body, send, receive, refusal, renamer)
    finally:
        manager.release(state)
    if refusal and stub_crashed(triton_error_text(bytes(refusal))):
        manager.reload_on_next_request(state)  # as an invocation does (front._call_model)


def _target_model(manager: ModelManager, model: str) -> str | None:
    if model in manager.models:
        return model
    for target, state in manager.models.items():
        if state.entry.name == model:
            return target
    return None


async def _proxy(
    manager: ModelManager,
    path: str,
    body: bytes,
    send: Send,
    receive: Receive | None,
    refusal: bytearray,
    renamer: alias.Renamer | None = None,
) -> None:
    loop = asyncio.get_running_loop()
    try:
        sock = await manager.triton.open_socket()
        transport, upstream = await loop.create_connection(_Upstream, sock=sock)
    except OSError as exc:
        await _triton_error(send, 503, f"the local Triton runtime cannot be reached: {exc}")
        return
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    transport.writelines([head, body])
    timeout = manager.settings.invocation_timeout
    relay = asyncio.ensure_future(_relay(upstream, send, timeout, refusal, renamer))
    gone = asyncio.ensure_future(_disconnected(receive)) if receive is not None else None
    try:
        await asyncio.wait([t for t in (relay, gone) if t is not None], return_when=FIRST)
        if relay.done():
            message = relay.result()
            if message is not None:
                log.warning("generate stream for %s broken: %s", path, message)
    finally:
        for task in (relay, gone):
            if task is not None and not task.done():
                task.cancel()
        transport.close()  # a caller gone mid-stream: Triton cancels the request


FIRST = asyncio.FIRST_COMPLETED


async def _disconnected(receive: Receive) -> None:
    """Return once the caller has disconnected (its body was read whole before)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _relay(
    upstream: _Upstream,
    send: Send,
    timeout: float,
    refusal: bytearray,
    renamer: alias.Renamer | None = None,
) -> str | None:
    """Pass Triton's answer on; why the stream broke after it began (None: it did not). The
    start of an answer other than 200 is kept in ``refusal`` (Triton's error). ``renamer``:
    the model is loaded under its alias, renamed back in the answer."""
    started = False
    try:
        async with asyncio.timeout(timeout):
            status, headers = await upstream.head
            await send({"type": "http.response.start", "status": status, "headers": headers})
            started = True
            while (chunk := await upstream.chunks.get()) is not None:
                if isinstance(chunk, Exception):
                    raise chunk
                taken = len(chunk)
                if renamer is not None:
                    chunk = renamer.feed(chunk) if status == 200 else renamer.in_error(chunk)
                if status != 200:
                    refusal += chunk[: max(0, REFUSAL_CAP - len(refusal))]
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                upstream.taken(taken)
            rest = renamer.flush() if renamer is not None else b""
            await send({"type": "http.response.body", "body": rest})
    except (TimeoutError, StreamBroken) as exc:
        message = str(exc) or f"no complete answer within the {timeout:g} s invocation timeout"
        if not started:
            await _triton_error(send, 503 if isinstance(exc, StreamBroken) else 504, message)
            return None
        # Returning without the body's end makes the server cut the connection: the caller
        # sees a broken stream, not a complete-looking short one.
        return message
    return None


async def _triton_error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
