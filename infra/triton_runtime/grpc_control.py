"""Model loads over Triton's gRPC listener, so that a load never stalls inference over HTTP.

Triton's HTTP frontend serves each connection on one of a few libevhtp threads
(``--http-thread-count``, 8 by default), and its repository load handler calls
``TRITONSERVER_ServerLoadModelWithParameters`` on that thread and returns only once the model is
loaded (triton-inference-server/server ``src/http_server.cc``, ``HandleRepositoryControl``,
read 2026-12-07). For the seconds a load takes, every other connection served by that thread
waits: measured 2026-12-07 on the runtime wheel's Triton 2.51 (CPU), 12 loads over HTTP held a
warm model's inference for up to 4.3 s (3 runs of 5), over gRPC never above 27 ms (3 of 3;
``docs/kubernetes.md``). Triton's gRPC frontend runs ``RepositoryModelLoad`` on a thread of its
own (``src/grpc/grpc_server.cc``, ``CommonHandler::RegisterRepositoryModelLoad``: ``async``), so
the front loads through it wherever it can reach Triton's gRPC listener (in a network
namespace of Triton's own, through the front's relay: ``grpc_relay``); unloads, which Triton
answers at once, stay on HTTP.

The request is one field, ``RepositoryModelLoadRequest.model_name`` (field 2, a string: Triton's
``grpc_service.proto``); ``request_bytes`` encodes it, and a test checks it byte for byte against
``tritonclient``'s generated message. The call is made with grpcio's synchronous channel and
its future, bridged to the event loop: no thread waits per load.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

#: Triton's inference service and its load method (``grpc_service.proto``)
LOAD_METHOD = "/inference.GRPCInferenceService/RepositoryModelLoad"
#: Triton's liveness, and its answer ``ServerLiveResponse(live=true)`` serialized (field 1, a bool)
LIVE_METHOD = "/inference.GRPCInferenceService/ServerLive"
LIVE_RESPONSE = b"\x08\x01"
#: how long the liveness check waits (a listener that accepts and never answers)
LIVE_TIMEOUT_S = 10.0
#: the field number and wire type of ``model_name`` in ``RepositoryModelLoadRequest``
_MODEL_NAME_TAG = (2 << 3) | 2
#: a refused load answers this status, as Triton's HTTP frontend does
FAILED_STATUS = 400
#: what Triton's gRPC frontend puts before a restricted API's header name
RESTRICTED_PREFIX = "triton-grpc-protocol-"
#: how Triton 2.51 begins its refusal of a restricted call (status UNAVAILABLE, not a lost link)
_RESTRICTED_REFUSAL = "This protocol is restricted"


class ControlUnreachable(ConnectionError):
    """Triton's gRPC listener did not answer (Triton died, or is restarting)."""


@dataclass(frozen=True)
class LoadAnswer:
    """Triton's answer to a load: ``status`` 200, or 400 with Triton's ``message``."""

    status: int
    message: str = ""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def request_bytes(model_name: str) -> bytes:
    """``RepositoryModelLoadRequest(model_name=...)`` serialized."""
    name = model_name.encode("utf-8")
    return bytes([_MODEL_NAME_TAG]) + _varint(len(name)) + name


def _identity(data: bytes) -> bytes:
    return data


def grpc_metadata(headers: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The restricted APIs' HTTP ``headers`` as Triton's gRPC frontend wants them: each key
    prefixed ``triton-grpc-protocol-`` (Triton 2.51 answers UNAVAILABLE "This protocol is
    restricted, expecting header 'triton-grpc-protocol-<key>'" otherwise: measured 2026-12-07)."""
    return tuple((f"{RESTRICTED_PREFIX}{key.lower()}", value) for key, value in headers)


class GrpcControl:
    """Loads into the Triton whose gRPC listener is at ``address`` (``host:port``, or
    ``unix:<path>``: ``grpc_relay``), with the restricted APIs' ``headers`` (as sent over HTTP)
    on every call."""

    def __init__(self, address: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        self.address = address
        self._metadata = grpc_metadata(headers)
        self._channel = grpc.insecure_channel(address)
        self._load = self._channel.unary_unary(
            LOAD_METHOD, request_serializer=_identity, response_deserializer=_identity
        )
        self._live = self._channel.unary_unary(
            LIVE_METHOD, request_serializer=_identity, response_deserializer=_identity
        )

    async def load(self, model_name: str) -> LoadAnswer:
        """Load ``model_name``; ControlUnreachable when Triton's listener does not answer. The
        call ends when Triton answers or the connection ends, as the HTTP load it replaces (a
        load takes as long as the model's); cancelling the task cancels it."""
        answer, _ = await self._call(self._load, request_bytes(model_name), None)
        return answer

    async def live(self) -> bool:
        """Whether the listener answers Triton's ServerLive with ``live: true`` within
        ``LIVE_TIMEOUT_S`` (anything else there, such as Triton's HTTP port, does not)."""
        try:
            answer, body = await self._call(self._live, b"", LIVE_TIMEOUT_S)
        except ControlUnreachable:
            return False
        return answer.status == 200 and body == LIVE_RESPONSE

    async def _call(
        self, method: grpc.UnaryUnaryMultiCallable, request: bytes, timeout: float | None
    ) -> tuple[LoadAnswer, bytes]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[LoadAnswer, bytes]] = loop.create_future()
        call = method.future(request, timeout=timeout, metadata=self._metadata)

        def settle(finished: grpc.Future) -> None:
            loop.call_soon_threadsafe(_settle, done, finished)

        call.add_done_callback(settle)
        try:
            return await done
        except asyncio.CancelledError:
            call.cancel()
            raise

    def close(self) -> None:
        self._channel.close()


def _settle(done: asyncio.Future[tuple[LoadAnswer, bytes]], call: grpc.Future) -> None:
    if done.done():  # the awaiting task was cancelled (and cancelled the call)
        return
    if call.cancelled():  # the channel closed under it: Triton is being restarted or stopped
        done.set_exception(ControlUnreachable("Triton's gRPC channel closed during the load"))
        return
    error = call.exception()
    if error is None:
        done.set_result((LoadAnswer(200), bytes(call.result())))
        return
    code = error.code() if isinstance(error, grpc.Call) else None
    details = (error.details() if isinstance(error, grpc.Call) else None) or str(error)
    lost = code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
    if lost and not details.startswith(_RESTRICTED_REFUSAL):
        done.set_exception(ControlUnreachable(f"Triton's gRPC listener: {details}"))
    else:
        done.set_result((LoadAnswer(FAILED_STATUS, details), b""))
