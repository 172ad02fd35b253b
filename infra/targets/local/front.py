"""The SageMaker Runtime front: a raw ASGI app in front of the local Triton.

``POST /endpoints/{name}/invocations`` with ``X-Amzn-SageMaker-Target-Model`` is InvokeEndpoint,
so ``boto3.client("sagemaker-runtime", endpoint_url=...)`` works against it unchanged. Bodies are
streamed to Triton's ``/v2/models/<name>/infer`` as they arrive; errors carry SageMaker's codes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from infra.targets.local.errors import ApiError, internal, model_error, unavailable, validation
from infra.targets.local.manager import ModelManager
from infra.targets.local.upstream import UpstreamError

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("tdk.local")
BINARY_TYPE = "application/vnd.sagemaker-triton.binary+json"
_TARGET = b"x-amzn-sagemaker-target-model"
_VARIANT = (b"x-amzn-invoked-production-variant", b"AllTraffic")
_JSON = (b"content-type", b"application/json")


class ClientGone(Exception):
    """The caller disconnected before sending its whole body."""


def _header_size(content_type: str) -> str | None:
    """``json-header-size=N`` of a binary+json content type (as a string), else None."""
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != BINARY_TYPE:
        return None
    for part in params.split(";"):
        key, _, value = part.partition("=")
        if key.strip().lower() == "json-header-size" and value.strip().isdigit():
            return value.strip()
    return None


class Front:
    """ASGI application; ``on_ready`` runs once Triton is up (writes the state file)."""

    def __init__(self, manager: ModelManager, on_ready: Callable[[], None] | None = None) -> None:
        self.manager = manager
        self.name = manager.settings.name
        self.max_body = manager.settings.max_body
        self.on_ready = on_ready
        self.started = time.time()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.manager.start()
                    if self.on_ready is not None:
                        self.on_ready()
                except Exception as exc:
                    await self.manager.stop()
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.manager.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        if method == "POST" and path.endswith("/invocations"):
            parts = path.split("/")
            if path == "/invocations":
                await self.invoke(scope, receive, send, self.name)
                return
            if len(parts) == 4 and parts[1] == "endpoints":
                await self.invoke(scope, receive, send, parts[2])
                return
        if method == "GET" and path == "/ping":
            ok = self.manager.ready.is_set()
            await _respond(send, 200 if ok else 503, b"", [])
        elif method == "GET" and path == "/metrics":
            text = self.manager.metrics.prometheus(self.manager.loaded_count())
            await _respond(
                send, 200, text.encode(), [(b"content-type", b"text/plain; version=0.0.4")]
            )
        elif method == "GET" and path == "/tdk/status":
            status = self.manager.status() | {"started_at": self.started}
            await _respond(send, 200, json.dumps(status).encode(), [_JSON])
        else:
            await _error(
                send, ApiError(404, "UnknownOperationException", f"no route {method} {path}")
            )

    async def invoke(self, scope: Scope, receive: Receive, send: Send, endpoint: str) -> None:
        """InvokeEndpoint: resolve and load the TargetModel, stream the body to Triton."""
        started = time.perf_counter()
        metrics = self.manager.metrics
        target = content_type = None
        length: int | None = None
        for key, value in scope["headers"]:
            if key == _TARGET:
                target = value.decode("latin-1")
            elif key == b"content-type":
                content_type = value.decode("latin-1")
            elif key == b"content-length":
                length = int(value)
        try:
            response = await self._forward(endpoint, target, content_type, length, receive)
        except ApiError as exc:
            metrics.count(
                "Invocation4XXErrors" if exc.status < 500 else "Invocation5XXErrors", target
            )
            await _error(send, exc)
            return
        except ClientGone:
            return
        except Exception as exc:  # a bug must still answer in SageMaker's shape
            log.exception("invocation failed")
            metrics.count("Invocation5XXErrors", target)
            await _error(send, internal(f"{exc.__class__.__name__}: {exc}"))
            return
        status, body, headers, model_s = response
        metrics.observe("ModelLatency", model_s)
        metrics.observe("OverheadLatency", time.perf_counter() - started - model_s)
        await _respond(send, status, body, headers)

    async def _forward(
        self,
        endpoint: str,
        target: str | None,
        content_type: str | None,
        length: int | None,
        receive: Receive,
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], float]:
        if endpoint != self.name:
            raise validation(f"Endpoint {endpoint} not found (this local endpoint is {self.name})")
        if not target:
            raise validation(
                "the X-Amzn-SageMaker-Target-Model header is required by a multi-model endpoint"
            )
        if length is not None and length > self.max_body:
            raise ApiError(
                413,
                "ValidationError",
                f"request body of {length} bytes exceeds the {self.max_body}-byte payload limit",
            )
        state = await self.manager.acquire(target)
        self.manager.metrics.count("Invocations", target)
        extra: tuple[tuple[str, str], ...] = ()
        size = _header_size(content_type or "")
        if size is not None:
            extra = (("Inference-Header-Content-Length", size),)
        try:
            if length is None:
                body: bytes | AsyncIterator[bytes] = await _read_all(receive, self.max_body)
            else:
                body = _stream(receive, length)
            model_started = time.perf_counter()
            upstream = await self.manager.pool.request(
                "POST", f"/v2/models/{state.entry.name}/infer", body, length, extra
            )
            model_s = time.perf_counter() - model_started
        except UpstreamError as exc:
            raise unavailable(
                f"the local Triton runtime failed ({exc}); it is being restarted"
            ) from exc
        finally:
            self.manager.release(state)
        if upstream.status != 200:
            message = _triton_error(upstream.body)
            raise model_error(
                f"Received client error ({upstream.status}) from model {target}: {message}",
                original_status=upstream.status,
                original_message=message,
            )
        header_length = upstream.headers.get("inference-header-content-length")
        if header_length is not None:
            kind = f"{BINARY_TYPE};json-header-size={header_length}".encode()
        else:
            kind = upstream.headers.get("content-type", "application/json").encode("latin-1")
        return 200, upstream.body, [(b"content-type", kind), _VARIANT], model_s


async def _stream(receive: Receive, length: int) -> AsyncIterator[bytes]:
    received = 0
    while received < length:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        received += len(chunk)
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            break


async def _read_all(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413, "ValidationError", f"request body exceeds the {limit}-byte payload limit"
            )
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _triton_error(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")[:2000]


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _error(send: Send, exc: ApiError) -> None:
    headers = [(b"x-amzn-errortype", exc.code.encode()), _JSON]
    await _respond(send, exc.status, exc.body(), headers)
