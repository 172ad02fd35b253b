"""Who sends the load: this process's threads, or several generator processes, each with its own
threads and keep-alive connections (one Python process tops out near one core, so a fast server
needs more than one to be the limit). Each window reports the busiest process's CPU use, so a
report can say when the client, not the server, was the bound. Pinned to some CPUs
(``infra.perf.bench.placement``), the generator's threads and processes run only there.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
from collections import Counter
from collections.abc import Callable
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection
from typing import Any, Protocol

from infra.perf.bench.loadgen import Result, Send, Window, closed_loop
from infra.perf.bench.placement import pin, pinned
from tdk.errors import EndpointError

#: generator processes by default: enough to drive a small server twice over, bounded
DEFAULT_PROCESSES = max(1, min(4, os.cpu_count() or 1))
START_TIMEOUT_S = 120.0


def cpu_seconds() -> float:
    """User + system CPU time of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def busy(result: Result) -> float:
    """Cores the generator's threads used or waited for over the window (one Python process
    runs its threads on at most about one core: near 1.0 the client is the bound)."""
    return result.client_s / result.duration_s if result.duration_s else 0.0


class Driver(Protocol):
    """Runs one closed-loop window at a concurrency."""

    def window(self, concurrency: int, duration_s: float) -> Window: ...

    def close(self) -> None: ...


class InProcess:
    """Threads of this process, all sending through ``send`` (started on ``cpus`` if given)."""

    def __init__(self, send: Send, cpus: frozenset[int] | None = None) -> None:
        self.send = send
        self.cpus = cpus

    def window(self, concurrency: int, duration_s: float) -> Window:
        with pinned(self.cpus):  # the window's threads start here and inherit the CPUs
            result = closed_loop(self.send, concurrency, duration_s)
        return Window(result, busy(result))

    def close(self) -> None:
        close = getattr(self.send, "close", None)
        if callable(close):
            close()


def shares(concurrency: int, processes: int) -> list[int]:
    """``concurrency`` clients spread over ``processes`` as evenly as integers allow."""
    base, rest = divmod(concurrency, processes)
    return [base + (1 if i < rest else 0) for i in range(processes)]


def _worker(
    factory: Callable[[], Send], conn: Connection, cpus: frozenset[int] | None = None
) -> None:
    """A generator process: build a sender once, then run the windows it is asked for. A parent
    that stopped listening (interrupted, closed) ends it quietly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    pin(cpus)  # before any thread starts: they all inherit it
    try:
        send = factory()
    except Exception as exc:  # reported to the parent, which raises it as an EndpointError
        _tell(conn, ("error", f"{type(exc).__name__}: {exc}"))
        return
    if not _tell(conn, ("ready", "")):
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] != "run":
            return
        _, clients, duration_s = message
        result = closed_loop(send, clients, duration_s)
        payload = (result.ok, dict(result.errors), result.latencies_ms, result.duration_s)
        if not _tell(conn, ("done", (*payload, result.client_s))):
            return


def _tell(conn: Connection, message: tuple[str, Any]) -> bool:
    """Send ``message`` to the parent; False when it is gone (a broken pipe is no error here)."""
    try:
        conn.send(message)
    except OSError:  # BrokenPipeError, ConnectionResetError: the parent closed its end
        return False
    return True


class Processes:
    """``processes`` generator processes, each calling ``factory()`` (picklable) for its
    sender, on ``cpus`` if given; a window's clients are spread over them."""

    def __init__(
        self,
        factory: Callable[[], Send],
        processes: int = DEFAULT_PROCESSES,
        cpus: frozenset[int] | None = None,
    ) -> None:
        context = multiprocessing.get_context("spawn")  # safe beside threads, unlike fork
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        try:
            for _ in range(processes):
                parent, child = context.Pipe()
                work = (factory, child, cpus)
                proc = context.Process(target=_worker, args=work, daemon=True)
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
            for conn in self._conns:
                self._expect(conn, "ready", START_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def _expect(self, conn: Connection, kind: str, timeout: float) -> Any:
        if not conn.poll(timeout):
            raise EndpointError("a load-generator process did not answer", hint="re-run it")
        try:
            got, payload = conn.recv()
        except (EOFError, OSError) as exc:
            raise EndpointError("a load-generator process died", hint="re-run it") from exc
        if got != kind:
            raise EndpointError(f"a load-generator process failed: {payload}", hint="re-run it")
        return payload

    def window(self, concurrency: int, duration_s: float) -> Window:
        active = [
            (conn, clients)
            for conn, clients in zip(
                self._conns, shares(concurrency, len(self._conns)), strict=True
            )
            if clients
        ]
        for conn, clients in active:
            conn.send(("run", clients, duration_s))
        result = Result("concurrency", concurrency)
        busiest = 0.0
        for conn, _ in active:  # the windows ran side by side: the longest is the window
            ok, errors, latencies, took, used = self._expect(conn, "done", duration_s + 600)
            result.ok += ok
            result.errors.update(Counter(errors))
            result.latencies_ms.extend(latencies)
            result.client_s += used
            busiest = max(busiest, used / took if took else 0.0)
            result.duration_s = max(result.duration_s, took)
        return Window(result, busiest)

    def close(self) -> None:
        conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(OSError, ValueError):
                conn.send(("stop",))
            conn.close()
        procs, self._procs = self._procs, []
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
        if procs:
            _stop_resource_tracker()


def _stop_resource_tracker() -> None:
    """Stop and reap the resource-tracker process that starting ``spawn`` processes started, so
    nothing of ours outlives the run (it would otherwise exit only after this process does).
    ``_stop`` is CPython's own (3.8+); without it the tracker still exits with us."""
    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        stop()
