"""Triton's generate extension as a client: ``/v2/models/<m>/generate`` and ``generate_stream``.

The request carries the vLLM backend's inputs (``text_input``, ``stream``, ``sampling_parameters``
with ``max_tokens``). ``generate_stream`` answers server-sent events, one per response of the
decoupled model; every event is decoded and checked (JSON object, no ``error``, a text
``text_output``). A stream that ends without its final response (the connection cut before the
chunked body's end) is an error, as is anything beyond the request's one deadline.

Output tokens are counted as AIPerf cannot here (it tokenizes the text with the model's
tokenizer): one per streamed response with text, which is exact for engines that stream a token
per response (vLLM, TensorRT-LLM with streaming, the sample ``llm``); without streaming, the
whitespace-separated words of the answer, an estimate.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from infra.clients.base import InvokeFailed
from infra.clients.deadline import DEFAULT_TIMEOUT_S, Watchdog
from infra.clients.triton_errors import triton_error_text
from tdk.errors import EndpointError, UsageError

OnChunk = Callable[[str], None]


@dataclass(frozen=True)
class Generation:
    """One generate request as the caller saw it (times in ms from sending the request)."""

    text: str
    chunks: int
    output_tokens: int
    ttft_ms: float
    total_ms: float
    #: arrival time of each chunk with text, ms from the request's start
    chunk_ms: tuple[float, ...] = field(default=(), repr=False)
    finish_reason: str | None = None

    def summary(self) -> dict[str, Any]:
        """The ``--json`` document of ``tdk invoke --prompt``."""
        return {
            "text": self.text,
            "chunks": self.chunks,
            "output_tokens": self.output_tokens,
            "ttft_ms": round(self.ttft_ms, 3),
            "total_ms": round(self.total_ms, 3),
        }


class StreamError(InvokeFailed):
    """The answer was not a complete, well-formed generate response."""


class Generator(Protocol):
    """What ``tdk invoke --prompt`` and ``tdk bench generate`` call: one model's generate
    route (Triton's HTTP ``generate``/``generate_stream``, or a target's own)."""

    model: str

    def generate(
        self, prompt: str, max_tokens: int, stream: bool, on_chunk: OnChunk | None = None
    ) -> Generation: ...


def request_body(prompt: str, max_tokens: int, stream: bool) -> bytes:
    """The JSON body Triton's generate endpoint maps onto the vLLM backend's inputs."""
    return json.dumps(
        {
            "text_input": prompt,
            "stream": stream,
            "sampling_parameters": json.dumps({"max_tokens": max_tokens}),
        }
    ).encode()


def event_text(payload: bytes, index: int) -> tuple[str, str | None]:
    """The ``text_output`` (and ``finish_reason``) of one response; StreamError when it is
    not a JSON object with a text ``text_output`` or carries Triton's ``error``."""
    try:
        event = json.loads(payload)
    except ValueError:
        raise StreamError(f"response {index} is not JSON: {payload[:200]!r}") from None
    if not isinstance(event, dict):
        raise StreamError(f"response {index} is not a JSON object: {payload[:200]!r}")
    if "error" in event:
        raise StreamError(f"the model failed at response {index}: {event['error']}")
    text = event.get("text_output")
    if isinstance(text, list) and all(isinstance(part, str) for part in text):
        text = "".join(text)
    if not isinstance(text, str):
        raise StreamError(
            f"response {index} has no text output: {payload[:200]!r}",
            hint="the model must answer `text_output` (the vLLM backend's name)",
        )
    finish = event.get("finish_reason")
    return text, (finish if isinstance(finish, str) else None)


def sse_data(lines: Iterator[bytes]) -> Iterator[bytes]:
    """The ``data`` of each server-sent event (multi-line data joined by newlines)."""
    data: list[bytes] = []
    for raw in lines:
        line = raw.rstrip(b"\r\n")
        if not line:
            if data:
                yield b"\n".join(data)
            data = []
        elif line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
    if data:  # the last event lacks its blank line: the stream was cut
        raise StreamError("the stream ended inside an event")


class GenerateClient:
    """Calls one model's generate endpoints at ``url`` (Triton, or the local endpoint)."""

    def __init__(self, url: str, model: str, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"--url {url!r} is not an HTTP address", hint="e.g. --url http://127.0.0.1:8000"
            )
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.model = model
        self.timeout = timeout

    def generate(
        self, prompt: str, max_tokens: int, stream: bool, on_chunk: OnChunk | None = None
    ) -> Generation:
        """One request; ``on_chunk`` is called with each piece of text as it arrives."""
        kind = "generate_stream" if stream else "generate"
        path = f"{self.prefix}/v2/models/{self.model}/{kind}"
        conn_type = (
            http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        )
        conn = conn_type(self.host, self.port, timeout=self.timeout)
        watchdog = Watchdog(self.timeout, lambda: _shut(conn))
        started = time.perf_counter()
        try:
            with watchdog:
                conn.request("POST", path, request_body(prompt, max_tokens, stream), _HEADERS)
                response = conn.getresponse()
                if response.status != 200:
                    raise _refused(response, f"{self.host}:{self.port}{path}")
                if stream:
                    return _read_stream(response, started, on_chunk)
                return _read_one(response, started, on_chunk)
        except (OSError, http.client.HTTPException) as exc:
            # a read that waited the whole timeout is the deadline too: under load the socket's
            # timeout can fire before the watchdog's thread has marked it
            if watchdog.fired or isinstance(exc, TimeoutError):
                raise EndpointError(
                    f"{path}: no complete answer within {self.timeout:g} s",
                    hint="raise --timeout, or lower --max-tokens",
                ) from None
            raise StreamError(
                f"{path}: the answer broke off ({exc.__class__.__name__}: {exc})",
                hint="a stream that ends without its final response is an error; "
                "check the server's log",
            ) from None
        finally:
            conn.close()


_HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream, application/json"}


def _shut(conn: http.client.HTTPConnection) -> None:
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _refused(response: http.client.HTTPResponse, where: str) -> InvokeFailed:
    body = response.read(64 * 1024)
    if body.startswith(b"data:"):  # Triton answers a stream that failed at once as one event
        body = body[5:].strip()
    return InvokeFailed(
        f"{where} answered {response.status}: {triton_error_text(body)}",
        hint="check --target-model and --max-tokens; Triton's log says more",
        status=response.status,
    )


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _lines(response: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body's lines as they arrive. ``read1`` raises IncompleteRead when a chunked body
    stops before its last chunk (``readline`` would swallow that and look like a clean end)."""
    return split_lines(iter(lambda: response.read1(64 * 1024), b""))


def split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Lines (with their ends) of a body that arrives in arbitrary chunks."""
    buffer = b""
    for data in chunks:
        buffer += data
        while (end := buffer.find(b"\n")) >= 0:
            yield buffer[: end + 1]
            buffer = buffer[end + 1 :]
    if buffer:
        yield buffer


def _read_stream(
    response: http.client.HTTPResponse, started: float, on_chunk: OnChunk | None
) -> Generation:
    return read_events(_lines(response), started, on_chunk)


def read_events(lines: Iterable[bytes], started: float, on_chunk: OnChunk | None) -> Generation:
    """A generate_stream answer (server-sent events, as lines) decoded and checked, timed from
    ``started`` (``time.perf_counter``)."""
    pieces: list[str] = []
    times: list[float] = []
    finish = None
    count = 0
    for count, payload in enumerate(sse_data(iter(lines)), start=1):
        text, reason = event_text(payload, count)
        finish = reason or finish
        if text:
            times.append(_elapsed_ms(started))
            pieces.append(text)
            if on_chunk is not None:
                on_chunk(text)
    if not times:
        raise StreamError(f"the stream ended after {count} responses without any text")
    return Generation(
        "".join(pieces), count, len(times), times[0], _elapsed_ms(started), tuple(times), finish
    )


def _read_one(
    response: http.client.HTTPResponse, started: float, on_chunk: OnChunk | None
) -> Generation:
    text, finish = event_text(response.read(), 1)
    total = _elapsed_ms(started)
    if on_chunk is not None:
        on_chunk(text)
    return Generation(text, 1, len(text.split()), total, total, (total,), finish)
