"""InvokeEndpointWithResponseStream on the local endpoint, for inference components.

``POST /endpoints/{name}/invocations-response-stream`` with ``X-Amzn-SageMaker-Inference-Component``
is what ``tdk invoke --prompt`` / ``tdk bench generate --target sagemaker-ic`` send to a copy's
component, whose Triton runs in SageMaker's ``generate_stream`` mode. Here it is served by the
local Triton's generate_stream route; each piece of Triton's server-sent events goes out as one
``PayloadPart`` event of the AWS event-stream encoding (botocore's sagemaker-runtime model, shape
``ResponseStream``, checked 2026-11-26). A stream Triton breaks ends with a ``ModelStreamError``
event, as SageMaker reports a container failure mid-stream.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from infra.clients.triton_errors import triton_error_text
from infra.targets.local.errors import ApiError, model_error

Send = Callable[[dict[str, Any]], Awaitable[None]]
ROUTE_SUFFIX = "/invocations-response-stream"
EVENT_STREAM = b"application/vnd.amazon.eventstream"
_STRING = 7  # the event-stream header value type of a UTF-8 string
_REFUSAL_CAP = 64 * 1024  # of a refusal's body kept for its message (Triton's are short)


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack("B", len(raw_name))
        + raw_name
        + struct.pack("!BH", _STRING, len(raw_value))
        + raw_value
    )


def message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude (lengths and their CRC-32), headers, payload, CRC-32."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + encoded + payload
    return body + struct.pack("!I", zlib.crc32(body))


def payload_part(data: bytes) -> bytes:
    """A ``PayloadPart`` event carrying ``data``."""
    headers = {
        ":event-type": "PayloadPart",
        ":content-type": "application/octet-stream",
        ":message-type": "event",
    }
    return message(headers, data)


def model_stream_error(text: str) -> bytes:
    """A ``ModelStreamError`` exception event (the stream's own error, after the 200)."""
    headers = {
        ":exception-type": "ModelStreamError",
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return message(headers, json.dumps({"Message": text, "ErrorCode": "ModelError"}).encode())


class StreamSender:
    """Wraps the ASGI ``send`` that ``generate.serve`` writes to: a 200 becomes an event stream,
    each body chunk a ``PayloadPart``; any other answer is kept for the caller to refuse in
    SageMaker's shape (``refusal``)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.status: int | None = None
        self.refused = b""
        self.ended = False

    async def __call__(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            self.status = msg["status"]
            if self.status == 200:
                headers = [(b"content-type", EVENT_STREAM)]
                headers.append((b"x-amzn-sagemaker-content-type", b"text/event-stream"))
                await self.send({"type": "http.response.start", "status": 200, "headers": headers})
            return
        body: bytes = msg.get("body", b"")
        if self.status != 200:
            self.refused += body[: max(0, _REFUSAL_CAP - len(self.refused))]
            return
        if body:
            part = payload_part(body)
            await self.send({"type": "http.response.body", "body": part, "more_body": True})
        if not msg.get("more_body", False):
            self.ended = True
            await self.send({"type": "http.response.body", "body": b""})

    async def finish(self) -> None:
        """After ``generate.serve``: a stream it left open (Triton broke it) gets its error."""
        if self.status == 200 and not self.ended:
            error = model_stream_error("the model's stream broke off before its final response")
            await self.send({"type": "http.response.body", "body": error})

    def refusal(self, target: str) -> ApiError | None:
        """The refusal to answer when Triton did not start a stream (None when it did)."""
        if self.status is None or self.status == 200:
            return None
        text = triton_error_text(self.refused)
        side = "client" if self.status < 500 else "server"
        return model_error(
            f"Received {side} error ({self.status}) from model {target}: {text}", self.status, text
        )
