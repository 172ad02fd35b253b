"""Triton is up only when the listeners on its ports are its own.

The kit picks free ports and lets go of them before Triton binds them; another process can take
one meanwhile. Triton 2.51 then answers on HTTP and exits a moment later (its metrics port was
taken): ``start()`` returned a server about to die, and the local endpoint's first load met a
closed port ("cannot reach Triton", a flaky bench smoke under load).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.triton_runtime import listeners, runtime
from infra.triton_runtime.runtime import TritonProcess, find_runtime
from tdk.errors import TdkError
from tests.local.conftest import _runtime_or_skip


@pytest.fixture
def taken() -> Iterator[int]:
    """A port another listener holds."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield int(busy.getsockname()[1])


def _ports(monkeypatch: pytest.MonkeyPatch, first: list[int]) -> list[int]:
    """``free_port`` answers ``first`` in turn, then free ports; the list of what it answered
    (a start takes three: HTTP, gRPC, metrics)."""
    answers = itertools.chain(first, iter(runtime.free_port, None))
    handed: list[int] = []
    monkeypatch.setattr(runtime, "free_port", lambda: handed.append(next(answers)) or handed[-1])
    return handed


def _triton(tmp_path: Path) -> TritonProcess:
    _runtime_or_skip()
    (tmp_path / "repo").mkdir()
    return TritonProcess(find_runtime(), tmp_path / "repo", tmp_path / "work")


def test_a_metrics_port_taken_meanwhile_starts_triton_on_fresh_ports(
    tmp_path: Path, taken: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    free = runtime.free_port
    handed = _ports(monkeypatch, [free(), free(), taken])
    triton = _triton(tmp_path)

    async def run() -> tuple[bool | None, int | None, int]:
        await triton.start()
        try:
            assert triton.pid is not None
            ports = tuple(handed[-3:])  # the ports of the start that returned
            # before the fix start() returned the first Triton, whose metrics port was not its
            # own: it exited a moment later
            assert triton.proc is not None
            return listeners.holds(triton.pid, ports), triton.proc.returncode, ports[2]
        finally:
            await triton.stop()

    held, code, metrics = asyncio.run(run())
    assert held is True and code is None
    assert metrics != taken
    assert "already in use" in triton.log_path.read_text()  # the first start lost its port


def test_a_port_taken_every_time_is_an_error_naming_it(
    tmp_path: Path, taken: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    free = runtime.free_port
    turn = itertools.count()
    monkeypatch.setattr(runtime, "free_port", lambda: taken if next(turn) % 3 == 2 else free())
    triton = _triton(tmp_path)
    with pytest.raises(TdkError, match=f"lost a port to another process {runtime.PORT_TRIES}"):
        asyncio.run(triton.start(timeout=60))
    assert triton.proc is not None and triton.proc.returncode is not None  # none left running


def test_holds_tells_its_own_listener_from_another_process() -> None:
    with socket.socket() as mine:
        mine.bind(("127.0.0.1", 0))
        mine.listen()
        port = int(mine.getsockname()[1])
        assert listeners.holds(os.getpid(), [port]) is True
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen();"
            "print(s.getsockname()[1], flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None
        theirs = int(other.stdout.readline())
        assert listeners.holds(os.getpid(), [theirs]) is False
        assert listeners.holds(other.pid, [theirs]) is True
    finally:
        other.communicate("")


def test_holds_cannot_tell_without_the_process() -> None:
    assert listeners.holds(2**22 + 7, [80]) is None  # above Linux's pid_max


def test_the_same_free_port_twice_goes_to_one_listener_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel may hand the same free port twice in a row (each is let go before the next
    is asked for): Triton then refused to start (gRPC and metrics on one port, CI 2026-12-07).
    Its three listeners get three different ports."""
    free = runtime.free_port
    again = free()
    handed = _ports(monkeypatch, [again, again, free(), again, free()])
    triton = _triton(tmp_path)

    async def run() -> tuple[int, int, int]:
        await triton.start()
        try:
            return triton.http_port, triton.grpc_port, triton.metrics_port
        finally:
            await triton.stop()

    ports = asyncio.run(run())
    assert len(set(ports)) == 3 and ports[0] == again
    assert handed[:2] == [again, again]  # the repeat was drawn, and passed over


def test_distinct_ports_gives_up_with_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "free_port", lambda: 8000)
    with pytest.raises(TdkError, match="no 3 different free ports"):
        runtime.distinct_ports(draws=5)
