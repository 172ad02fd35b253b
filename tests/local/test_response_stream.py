"""The local endpoint's InvokeEndpointWithResponseStream encoding, read back with botocore's own
event-stream parser and sagemaker-runtime model: payload parts, and a broken stream's error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, cast

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.exceptions import EventStreamError
from botocore.model import StructureShape
from botocore.parsers import EventStreamJSONParser

from infra.targets.local.response_stream import StreamSender

_MODEL = botocore.session.get_session().get_service_model("sagemaker-runtime")
SHAPE = cast(StructureShape, _MODEL.shape_for("ResponseStream"))


def _run(messages: list[dict[str, Any]], close: bool) -> tuple[list[dict[str, Any]], StreamSender]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    sender = StreamSender(send)

    async def drive() -> None:
        for message in messages:
            await sender(message)
        if close:
            await sender.finish()

    asyncio.run(drive())
    return sent, sender


class _Raw:
    """What botocore's EventStream reads from: the response body's ``stream()``."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self) -> list[bytes]:
        return [self.data]

    def close(self) -> None:
        pass


def _events(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    raw = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return list(EventStream(_Raw(raw), SHAPE, EventStreamJSONParser(), "Op"))


START = {"type": "http.response.start", "status": 200, "headers": []}


def _body(data: bytes, more: bool = True) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": more}


def test_each_chunk_is_a_payload_part_botocore_reads() -> None:
    sent, _ = _run([START, _body(b"data: a\n\n"), _body(b"data: b\n\n"), _body(b"", False)], True)
    assert sent[0]["headers"][0] == (b"content-type", b"application/vnd.amazon.eventstream")
    parts = [event["PayloadPart"]["Bytes"] for event in _events(sent)]
    assert parts == [b"data: a\n\n", b"data: b\n\n"]
    assert sent[-1] == {"type": "http.response.body", "body": b""}  # the stream's end, once


def test_a_stream_triton_broke_ends_with_a_model_stream_error() -> None:
    sent, _ = _run([START, _body(b"data: a\n\n")], True)  # generate.serve returned mid-stream
    raw = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    events: Iterator[dict[str, Any]] = iter(
        EventStream(_Raw(raw), SHAPE, EventStreamJSONParser(), "Op")
    )
    assert next(events)["PayloadPart"]["Bytes"] == b"data: a\n\n"
    with pytest.raises(EventStreamError) as caught:  # boto3 raises the stream's error event
        next(events)
    assert caught.value.response["Error"]["Code"] == "ModelStreamError"
    assert "broke off" in caught.value.response["Error"]["Message"]


def test_a_refusal_before_the_stream_is_a_model_error() -> None:
    refused = {"type": "http.response.start", "status": 400, "headers": []}
    sent, sender = _run([refused, _body(b'{"error":"max_tokens 0"}', False)], False)
    assert sent == []  # nothing went out: the front answers in SageMaker's shape
    error = sender.refusal("llm-0")
    assert error is not None and error.code == "ModelError" and error.original_status == 400
    assert str(error) == "Received client error (400) from model llm-0: max_tokens 0"
