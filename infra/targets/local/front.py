"""The SageMaker Runtime front: a raw ASGI app in front of the local Triton.

``POST /endpoints/{name}/invocations`` with ``X-Amzn-SageMaker-Target-Model`` is InvokeEndpoint,
so ``boto3.client("sagemaker-runtime", endpoint_url=...)`` works against it unchanged. The whole
body (at most the payload limit, within the body timeout) is read before a model slot is taken,
then sent to Triton's ``/v2/models/<name>/infer``; errors carry SageMaker's codes.
``.../invocations-response-stream`` (InvokeEndpointWithResponseStream) and Triton's generate
routes serve decoupled copies (``response_stream``, ``generate``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from infra.clients.triton_errors import triton_error_text
from infra.clouds.aws.sagemaker.components import component_name
from infra.clouds.aws.sagemaker.runtime import RELOADS
from infra.targets.local import alias, bounds, generate, response_stream, switch
from infra.targets.local.body import (
    BINARY_TYPE,
    Chunk,
    ClientGone,
    checked_inference,
    header_size,
    json_header_size,
    read_body,
    read_chunks,
    size_of,
    too_large,
)
from infra.targets.local.errors import ApiError, internal, model_error, unavailable, validation
from infra.targets.local.manager import ModelManager, ModelState, forgotten, stub_crashed
from infra.targets.local.metrics import CONTENT_TYPE
from infra.targets.local.peers import SCOPE_KEY, is_owner
from infra.targets.local.upstream import UpstreamError, UpstreamResponse
from tdk.errors import TdkError

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("tdk.local")
_TARGET = b"x-amzn-sagemaker-target-model"
#: InvokeEndpoint's InferenceComponentName (botocore sagemaker-runtime model, checked 2026-11-24)
_COMPONENT = b"x-amzn-sagemaker-inference-component"
_VARIANT = (b"x-amzn-invoked-production-variant", b"AllTraffic")
_JSON = (b"content-type", b"application/json")
#: Triton's v2 inference for a copy by its Triton name (the front loads it first)
_V2_INFER = re.compile(
    r"^/v2/models/(?P<model>[A-Za-z0-9._-]{1,255})(?:/versions/[0-9]{1,19})?/infer$"
)
_INFER_HEADER = b"inference-header-content-length"
#: whether the model was loaded when the request came (SageMaker's ModelCacheHit, per request)
_CACHE_HEADER = b"x-tdk-model-cache-hit"
#: on a cold request: the download and Triton load (ms) of the load it waited for, so a client
#: compares each cold request with its own load (bench/mme_k8s.py's cold figures)
_DOWNLOAD_HEADER = b"x-tdk-model-download-ms"
_LOAD_HEADER = b"x-tdk-model-load-ms"
#: on a cold request: where its wait went, ``phase=ms`` pairs joined by ``;``: ``wait`` (its
#: time waiting for the model, this load's or one under way), the load's phases
#: (``model_state.LOAD_PHASES``), and ``infer`` (Triton's answer to it)
_PHASES_HEADER = b"x-tdk-model-load-phases"
STOP_POLL_S = 0.1  # how often a start looks whether the server was told to stop


class StartInterrupted(TdkError):
    """Told to stop (SIGTERM, Ctrl-C) before the endpoint was ready."""


class Front:
    """ASGI application; ``on_ready`` runs once Triton is up (writes the state file)."""

    def __init__(self, manager: ModelManager, on_ready: Callable[[], None] | None = None) -> None:
        self.manager = manager
        self.name = manager.settings.name
        self.max_body = manager.settings.max_body
        self.on_ready = on_ready
        #: the secret ``POST /tdk/switch`` asks for (``serve`` sets it; empty: refused)
        self.control = ""
        self.started = time.time()
        self.startup_error: Exception | None = None
        #: inference component name -> TargetModel, built on the first component request
        self._components: dict[str, str] | None = None
        #: whether the server was told to stop (set by ``serve``: uvicorn's should_exit)
        self.stopping: Callable[[], bool] = lambda: False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _start(self) -> None:
        """``manager.start()``, abandoned (and what it started stopped) as soon as the server
        is told to stop (SIGTERM, Ctrl-C): a start stuck on a stalled store never pins it."""
        task = asyncio.ensure_future(self.manager.start())
        while not task.done():
            await asyncio.wait([task], timeout=STOP_POLL_S)
            if self.stopping() and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise StartInterrupted(
                    "the local endpoint was stopped while starting",
                    hint="start it again with `tdk local up`",
                )
        task.result()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._start()
                    if self.on_ready is not None:
                        self.on_ready()
                except Exception as exc:
                    self.startup_error = exc
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
        if method == "POST" and path.endswith(response_stream.ROUTE_SUFFIX):
            parts = path.split("/")
            if len(parts) == 4 and parts[1] == "endpoints":
                await self._response_stream(scope, receive, send, parts[2])
                return
        if method == "POST" and (match := _V2_INFER.match(path)) is not None:
            await self.infer_v2(scope, receive, send, match["model"])
            return
        if (found := generate.route(method, path)) is not None:
            await self._generate(found, receive, send)
            return
        if method == "GET" and path == "/ping":
            ok = self.manager.ready.is_set()
            await _respond(send, 200 if ok else 503, b"", [])
        elif method == "GET" and path == "/metrics":
            manager = self.manager
            text = manager.metrics.prometheus(manager.loaded_count, manager.loaded_models)
            await _respond(send, 200, text, [(b"content-type", CONTENT_TYPE.encode())])
        elif method == "POST" and path == "/tdk/switch":
            await self._switch(scope, receive, send)
        elif method == "GET" and path == "/tdk/status":
            status = self.manager.status() | {"started_at": self.started}
            if not is_owner(scope.get(SCOPE_KEY)):  # the release URL is the owner's to see
                status["release"] = None
            await _respond(send, 200, json.dumps(status).encode(), [_JSON])
        else:
            await _error(
                send, ApiError(404, "UnknownOperationException", f"no route {method} {path}")
            )

    async def _switch(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._body(receive, send)
        if body is not None:
            code, answer = await switch.handle(self.manager, self.control, scope["headers"], body)
            await _respond(send, code, json.dumps(answer).encode(), [_JSON])

    async def _body(self, receive: Receive, send: Send) -> bytes | None:
        """The request body, JSON within bounds (``bounds.check_json``); None once the client
        was answered with the error (too large, too slow, too deep) or has gone."""
        try:
            body = await read_body(receive, self.max_body, self.manager.settings.body_timeout)
            bounds.check_json(body)
            return body
        except ApiError as exc:
            await _error(send, exc)
        except ClientGone:
            pass
        return None

    async def _generate(self, found: generate.Route, receive: Receive, send: Send) -> None:
        """Triton's generate / generate_stream (see ``infra.targets.local.generate``)."""
        body = await self._body(receive, send)
        if body is not None:
            await generate.serve(self.manager, found, body, send, receive)

    async def _response_stream(
        self, scope: Scope, receive: Receive, send: Send, endpoint: str
    ) -> None:
        """InvokeEndpointWithResponseStream: a decoupled copy's generate_stream as SageMaker's
        event stream (``infra.targets.local.response_stream``)."""
        headers = dict(scope["headers"])
        target = headers.get(_TARGET, b"").decode("latin-1")
        component = headers.get(_COMPONENT, b"").decode("latin-1")
        raw_length = headers.get(b"content-length")
        length = None if raw_length is None else int(raw_length) if raw_length.isdigit() else -1
        try:
            if not target and component:
                target = self._by_component(component)
            target = self._check_head(endpoint, target, length)
        except ApiError as exc:
            await _error(send, exc)
            return
        body = await self._body(receive, send)
        if body is None:
            return
        stream = response_stream.StreamSender(send)
        route = generate.Route(target, "generate_stream")
        await generate.serve(self.manager, route, body, stream, receive)
        refused = stream.refusal(target)
        if refused is not None:
            await _error(send, refused)
            return
        await stream.finish()

    async def invoke(self, scope: Scope, receive: Receive, send: Send, endpoint: str) -> None:
        """InvokeEndpoint: read the body, then resolve and load the TargetModel and call Triton."""
        started = time.perf_counter()
        metrics = self.manager.metrics
        target = content_type = component = None
        length: int | None = None
        for key, value in scope["headers"]:
            if key == _TARGET:
                target = value.decode("latin-1")
            elif key == _COMPONENT:
                component = value.decode("latin-1")
            elif key == b"content-type":
                content_type = value.decode("latin-1")
            elif key == b"content-length":
                length = int(value) if value.isdigit() else -1
        metrics.pending += 1
        try:
            if not target and component:
                target = self._by_component(component)
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
        finally:
            metrics.pending -= 1
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
        target = self._check_head(endpoint, target, length)
        # The whole body arrives before a model slot is taken: a slow client pins nothing.
        chunks = await read_chunks(receive, self.max_body, self.manager.settings.body_timeout)
        extra: tuple[tuple[str, str], ...] = ()
        size = json_header_size(content_type or "", size_of(chunks))
        if size is not None:
            extra = (("Inference-Header-Content-Length", str(size)),)
        body = checked_inference(chunks, size)  # before a model is loaded for it
        waited = time.perf_counter()
        state, hit = await self.manager.acquire_hit(target)
        self.manager.metrics.count("Invocations", target)
        model_started = time.perf_counter()
        waited = model_started - waited
        try:
            upstream = await self._call_model(state, body, extra)
        finally:
            self.manager.release(state)
        model_s = time.perf_counter() - model_started
        header_length = upstream.headers.get("inference-header-content-length")
        if header_length is not None:
            kind = f"{BINARY_TYPE};json-header-size={header_length}".encode()
        else:
            kind = upstream.headers.get("content-type", "application/json").encode("latin-1")
        headers = [(b"content-type", kind), _VARIANT, (_CACHE_HEADER, b"1" if hit else b"0")]
        if not hit:
            headers.append((_DOWNLOAD_HEADER, b"%.3f" % (state.download_s * 1000)))
            headers.append((_LOAD_HEADER, b"%.3f" % (state.load_s * 1000)))
            phases = {"wait": waited * 1000, **state.phases_ms(), "infer": model_s * 1000}
            shown = ";".join(f"{phase}={ms:.3f}" for phase, ms in phases.items())
            headers.append((_PHASES_HEADER, shown.encode()))
        return 200, upstream.body, headers, model_s

    async def infer_v2(self, scope: Scope, receive: Receive, send: Send, name: str) -> None:
        """Triton's ``POST /v2/models/<name>/infer`` for the copy named ``name``: loaded on its
        first request as InvokeEndpoint's TargetModel ``<name>.tar.gz`` is; errors in Triton's
        shape (``{"error": ...}``) with SageMaker's status codes."""
        started = time.perf_counter()
        metrics = self.manager.metrics
        target = f"{name}.tar.gz"
        extra: tuple[tuple[str, str], ...] = ()
        header: bytes | None = None
        for key, value in scope["headers"]:
            if key == _INFER_HEADER:
                header = value
                extra = (("Inference-Header-Content-Length", value.decode("latin-1")),)
        metrics.pending += 1
        try:
            self.manager.state_of(target)
            chunks = await read_chunks(receive, self.max_body, self.manager.settings.body_timeout)
            size = None if header is None else header_size(header, size_of(chunks))
            body = checked_inference(chunks, size)  # before a model is loaded for it
            state = await self.manager.acquire(target)
            metrics.count("Invocations", target)
            model_started = time.perf_counter()
            try:
                upstream = await self._call_model(state, body, extra)
            finally:
                self.manager.release(state)
        except ApiError as exc:
            metrics.count("Invocation4XXErrors" if exc.status < 500 else "Invocation5XXErrors")
            answer = json.dumps({"error": exc.message}).encode()
            await _respond(send, exc.status, answer, [_JSON])
            return
        except ClientGone:
            return
        finally:
            metrics.pending -= 1
        model_s = time.perf_counter() - model_started
        metrics.observe("ModelLatency", model_s)
        metrics.observe("OverheadLatency", time.perf_counter() - started - model_s)
        headers = [
            (b"content-type", upstream.headers.get("content-type", "application/json").encode())
        ]
        length = upstream.headers.get("inference-header-content-length")
        if length is not None:
            headers.append((_INFER_HEADER, length.encode("latin-1")))
        await _respond(send, 200, upstream.body, headers)

    def _by_component(self, component: str) -> str:
        """The TargetModel an inference component name stands for: the model copy of exactly
        that name, else the one copy the sagemaker-ic target deploys under that component
        name (``text_pipeline-0`` as ``text-pipeline-0``). A derived name two copies share, or
        one that is another copy's own name, never stands for a copy it does not name."""
        if self._components is None:
            exact = {state.entry.name: target for target, state in self.manager.models.items()}
            derived: dict[str, list[str]] = {}
            for name, target in exact.items():
                derived.setdefault(component_name(name), []).append(target)
            unique = {name: found[0] for name, found in derived.items() if len(found) == 1}
            self._components = unique | exact
        found = self._components.get(component)
        if found is None:
            shown = component if len(component) < 200 else component[:200] + "…"
            raise validation(f"Inference component {shown!r} is not in the release")
        return found

    def _check_head(self, endpoint: str, target: str | None, length: int | None) -> str:
        """What the request line and headers alone decide; the TargetModel when all is well."""
        if endpoint != self.name:
            raise validation(f"Endpoint {endpoint} not found (this local endpoint is {self.name})")
        if not target:
            raise validation(
                "an X-Amzn-SageMaker-Target-Model or -Inference-Component header is required"
            )
        self.manager.state_of(target)  # an unknown TargetModel is refused before the body
        if length is not None and length < 0:
            raise validation("the Content-Length header is not a number of bytes")
        if length is not None and length > self.max_body:
            raise too_large(f"request body of {length} bytes", self.max_body)
        return target

    async def _call_model(
        self, state: ModelState, body: list[Chunk], extra: tuple[tuple[str, str], ...]
    ) -> UpstreamResponse:
        """Triton's ``/v2/models/<name>/infer``, within the invocation timeout; 200 or raises.
        A model whose Python stub crashed is forgotten, to be loaded again on its next request
        (``ModelManager.reload_on_next_request``)."""
        target, name = state.entry.target_model, state.triton_name
        timeout = self.manager.settings.invocation_timeout
        try:
            async with asyncio.timeout(timeout):
                upstream = await self.manager.pool.request(
                    "POST", f"/v2/models/{name}/infer", body, None, extra
                )
        except TimeoutError:
            raise model_error(
                f"{target} did not answer within the {timeout:g} s invocation timeout"
            ) from None
        except UpstreamError as exc:
            raise unavailable(
                f"the local Triton runtime failed ({exc}); it is being restarted"
            ) from exc
        aliased = name != state.entry.name  # Triton's answer names the alias (``alias``)
        if aliased and upstream.status == 200:
            upstream = alias.renamed(upstream, name, state.entry.name)
        if upstream.status != 200:
            message = triton_error_text(upstream.body)
            message = message.replace(name, state.entry.name) if aliased else message
            if stub_crashed(message):
                self.manager.reload_on_next_request(state)
                raise model_error(
                    f"{target}: {message} (its Python backend stub crashed); the endpoint "
                    f"unloaded it and {RELOADS}, as SageMaker MME reloads a failed model",
                    original_status=upstream.status,
                    original_message=message,
                )
            if forgotten(message):
                self.manager.reload_on_next_request(state)
                raise unavailable(
                    f"{target}: Triton no longer holds it (it restarted); the endpoint "
                    f"{RELOADS}: retry"
                )
            side = "client" if upstream.status < 500 else "server"  # SageMaker's wording
            raise model_error(
                f"Received {side} error ({upstream.status}) from model {target}: {message}",
                original_status=upstream.status,
                original_message=message,
            )
        return upstream


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _error(send: Send, exc: ApiError) -> None:
    headers = [(b"x-amzn-errortype", exc.code.encode()), _JSON]
    if exc.close:
        headers.append((b"connection", b"close"))
    await _respond(send, exc.status, exc.body(), headers)
