"""A request body as the front reads it: bounded in size and time, kept as the chunks the
server handed over, and checked before a model is loaded for it (issue 47's bounds).

An inference body goes to Triton as those chunks (one ``writelines``), never joined: joining a
600 KB image body was one more copy of it per request, and the front's CPU per request is a
product figure on Kubernetes, where the front is in every request's path (issue 46). Only what
``bounds`` must scan is made contiguous: a JSON body whole, a binary+json body's JSON header.
A piece is a ``bytes`` or a ``memoryview`` of what the server read (``protocol``); whatever is
scanned or parsed is ``bytes``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from infra.targets.local import bounds
from infra.targets.local.errors import ApiError, validation

Receive = Callable[[], Awaitable[dict[str, Any]]]
#: a piece of a request body as the server hands it over
Chunk = bytes | memoryview
BINARY_TYPE = "application/vnd.sagemaker-triton.binary+json"


class ClientGone(Exception):
    """The caller disconnected before sending its whole body."""


async def read_chunks(receive: Receive, limit: int, timeout: float) -> list[Chunk]:
    """The whole request body as received, at most ``limit`` bytes, within ``timeout`` s."""
    chunks: list[Chunk] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone
                chunk = message.get("body", b"")
                if chunk:
                    size += len(chunk)
                    if size > limit:
                        raise too_large("request body", limit)
                    chunks.append(chunk)
                if not message.get("more_body", False):
                    return chunks
    except TimeoutError:
        raise ApiError(
            408,
            "RequestTimeout",
            f"the request body did not arrive within {timeout:g} s ({size} bytes received)",
            close=True,
        ) from None


async def read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    """``read_chunks`` as one ``bytes`` (for the bodies the front parses itself)."""
    return joined(await read_chunks(receive, limit, timeout))


def joined(chunks: Sequence[Chunk]) -> bytes:
    """The chunks as one ``bytes`` (the one chunk itself when it already is one)."""
    if len(chunks) == 1 and isinstance(chunks[0], bytes):
        return chunks[0]
    return b"".join(chunks)


def size_of(chunks: Sequence[Chunk]) -> int:
    return sum(map(len, chunks))


def checked_inference(chunks: list[Chunk], header_size: int | None) -> list[Chunk]:
    """An inference body's chunks, checked as Triton reads the body (``bounds``): all JSON
    (joined once, to be scanned, and sent as that one piece), or a binary+json body whose
    first ``header_size`` bytes are JSON and the rest raw tensor bytes (sent as received)."""
    if header_size is None:
        whole = joined(chunks)
        bounds.check_json(whole)
        return [whole]
    bounds.check_json(prefix(chunks, header_size), "request's JSON header")
    return chunks


def prefix(chunks: Sequence[Chunk], size: int) -> bytes:
    """The first ``size`` bytes of ``chunks`` (``size`` at most their total), as ``bytes``."""
    first = chunks[0] if chunks else b""
    if len(first) >= size:
        return bytes(first[:size])
    taken: list[Chunk] = []
    left = size
    for chunk in chunks:
        taken.append(chunk[:left])
        left -= len(taken[-1])
        if not left:
            break
    return b"".join(taken)


def too_large(what: str, limit: int) -> ApiError:
    """413 for a body beyond the payload limit (the server discards the rest of it)."""
    return ApiError(
        413,
        "ValidationError",
        f"{what} exceeds the {limit}-byte payload limit (InvokeEndpoint accepts at most 6 MB)",
    )


def header_size(raw: bytes, body_length: int) -> int:
    """Triton's ``Inference-Header-Content-Length``: the JSON header's bytes (1..body)."""
    if not (raw.isdigit() and len(raw) <= 19 and 0 < int(raw) <= body_length):
        raise validation(
            f"Inference-Header-Content-Length {raw[:20]!r} is not 1..{body_length} bytes"
        )
    return int(raw)


def json_header_size(content_type: str, body_length: int) -> int | None:
    """``json-header-size=N`` of a binary+json content type; None for other content types.

    A binary+json body without a valid N (missing, not a number, < 1, beyond the body) is a
    ValidationError naming the parameter, not something Triton fails on later.
    """
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != BINARY_TYPE:
        return None
    raw = None
    for part in params.split(";"):
        key, _, value = part.partition("=")
        if key.strip().lower() == "json-header-size":
            raw = value.strip()
    hint = f"expected 1..{body_length}, the byte length of the JSON header at the body's start"
    if raw is None:
        raise validation(f"Content-Type {BINARY_TYPE} needs json-header-size=N ({hint})")
    # isdigit() accepts other scripts' digits and int() refuses over 4300 digits: ASCII, short
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 19) or not 0 < int(raw) <= body_length:
        shown = raw if len(raw) <= 20 else f"{raw[:20]}… ({len(raw)} characters)"
        raise validation(f"Content-Type parameter json-header-size={shown!r} is invalid ({hint})")
    return int(raw)
