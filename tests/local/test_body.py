"""The front's request bodies (``infra.targets.local.body``): kept as the chunks the server
handed over and sent to Triton as they are (issue 46: no copy of a large body per request),
while a binary+json body's JSON header is bounds-checked even where it spans chunks (issue 47),
and the front's allocator keeps body-sized buffers instead of faulting in fresh pages."""

from __future__ import annotations

import asyncio
import platform
import subprocess
import sys
import textwrap

import pytest

from infra.targets.local.body import Chunk, checked_inference, prefix, read_chunks
from infra.targets.local.bounds import REQUEST_DEPTH
from infra.targets.local.errors import ApiError


def test_a_binary_body_is_sent_as_the_chunks_received() -> None:
    header = b'{"inputs":[{"name":"x","shape":[4],"datatype":"FP32"}]}'
    chunks: list[Chunk] = [header + b"\0" * 10, b"\1" * 300_000, b"\2" * 300_000]
    sent = checked_inference(chunks, len(header))
    assert sent is chunks  # the same objects: nothing joined or copied
    assert all(a is b for a, b in zip(sent, chunks, strict=True))


def test_a_json_header_split_across_chunks_is_still_bounded() -> None:
    deep = b"[" * (REQUEST_DEPTH + 1) + b"]" * (REQUEST_DEPTH + 1)
    chunks: list[Chunk] = [deep[:5], deep[5:40], deep[40:] + b"\0" * 100]
    with pytest.raises(ApiError, match="nests more than"):
        checked_inference(chunks, len(deep))
    ok = b"[" * REQUEST_DEPTH + b"]" * REQUEST_DEPTH
    assert checked_inference([ok[:3], ok[3:] + b"\0"], len(ok))[0] == ok[:3]


def test_a_json_body_is_checked_whole_and_sent_as_one_piece() -> None:
    body = b'{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}'
    assert checked_inference([body[:10], body[10:]], None) == [body]
    deep = b"[" * (REQUEST_DEPTH + 1) + b"]" * (REQUEST_DEPTH + 1)
    with pytest.raises(ApiError, match="nests more than"):
        checked_inference([deep[:7], deep[7:]], None)


def test_pieces_that_are_views_of_what_the_server_read_are_bounded_the_same() -> None:
    # the protocol hands over memoryviews; bounds scan bytes (a view has no `in` for bytes)
    deep = b'["\\"",' + b"[" * (REQUEST_DEPTH + 1) + b"]" * (REQUEST_DEPTH + 1) + b"]"
    for header in (None, len(deep)):
        with pytest.raises(ApiError, match="nests more than"):
            checked_inference(
                [memoryview(deep + b"\0")[: len(deep) + (header is not None)]], header
            )
    assert prefix([memoryview(b"abcdef")], 3) == b"abc"
    assert type(prefix([memoryview(b"abcdef")], 3)) is bytes
    body = b'{"inputs":[]}'
    assert checked_inference([memoryview(body)], None) == [body]


def test_prefix_takes_exactly_the_first_bytes() -> None:
    chunks = [b"abc", b"defg", b"hi"]
    assert [prefix(chunks, n) for n in (1, 3, 4, 7, 9)] == [
        b"a",
        b"abc",
        b"abcd",
        b"abcdefg",
        b"abcdefghi",
    ]


def test_read_chunks_bounds_the_size_and_keeps_the_chunks() -> None:
    messages = [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"", "more_body": True},
        {"type": "http.request", "body": b"cd", "more_body": False},
    ]

    async def receive() -> dict[str, object]:
        return messages.pop(0)

    assert asyncio.run(read_chunks(receive, 4, 5.0)) == [b"ab", b"cd"]
    messages[:] = [{"type": "http.request", "body": b"abcde", "more_body": False}]
    with pytest.raises(ApiError) as refused:
        asyncio.run(read_chunks(receive, 4, 5.0))
    assert refused.value.status == 413


_CHURN = """
import resource, sys
from infra.targets.local.allocator import keep_body_buffers
if sys.argv[1] == "kept":
    assert keep_body_buffers()
def churn():  # four 600 KB bodies in flight, then freed: what c8 on an image model does
    for _ in range(50):
        held = [bytes(600_000) for _ in range(4)]
        del held
churn()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
churn()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the allocator tuned is glibc's")
def test_the_fronts_allocator_keeps_body_buffers_instead_of_faulting_pages() -> None:
    def faults(mode: str) -> int:
        code = textwrap.dedent(_CHURN)
        done = subprocess.run(
            [sys.executable, "-c", code, mode], capture_output=True, text=True, check=True
        )
        return int(done.stdout.split()[-1])

    plain, kept = faults("plain"), faults("kept")
    assert plain > 1_000  # glibc's defaults: fresh pages for the bodies (5,200 measured)
    assert kept < plain / 20
