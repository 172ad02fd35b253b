"""``tdk bench``'s measurement: a cold/warm probe, then closed-loop levels or one open-loop rate,
recorded with what it ran on so ``tdk plan`` can size a fleet from it."""

from __future__ import annotations

import itertools
import signal
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from infra.clients.base import InferenceTarget, PreparedRequest
from infra.perf.bench import loadgen
from infra.perf.bench.drive import Driver, InProcess, Processes, cpu_seconds
from packager.manifest import ManifestModel
from tdk.signals import Terminated


@dataclass(frozen=True)
class Load:
    """Closed loop at each of ``concurrency``, or open loop at ``rate`` when given; each level
    is measured in windows of ``duration_s`` until stable (``stability``), the closed loop from
    ``processes`` generator processes."""

    concurrency: tuple[int, ...] = loadgen.DEFAULT_CONCURRENCY
    rate: float | None = None
    poisson: bool = False
    duration_s: float = 2.0
    stability: loadgen.Stability = field(default_factory=loadgen.Stability)
    processes: int = 1


@dataclass(frozen=True)
class RunsOn:
    """What the measured serving unit is (recorded for ``tdk plan``)."""

    target: str
    instance_type: str | None = None
    gpu: str | None = None


class ThreadClients:
    """A client per load-generator thread from ``make`` (an HTTP connection must not be shared
    across threads; ``make`` may return one thread-safe client for all)."""

    def __init__(self, make: Callable[[], InferenceTarget]) -> None:
        self._make = make
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[InferenceTarget] = []

    def get(self) -> InferenceTarget:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._make()
            with self._lock:
                self._all.append(client)
        return client

    def close(self) -> None:
        with self._lock:
            clients, self._all = self._all, []
        for client in {id(c): c for c in clients}.values():  # a shared client closes once
            client.close()


@dataclass(frozen=True)
class BenchSender:
    """Sends the prepared request and decodes the answer, one client per thread (picklable when
    ``make_client`` is, so a generator process can build its own)."""

    make_client: Callable[[], InferenceTarget]
    model: ManifestModel
    request: PreparedRequest
    more: tuple[PreparedRequest, ...] = ()  # further requests, sent in turn (--samples)

    def __call__(self) -> DecodingSend:
        clients = ThreadClients(self.make_client)
        return DecodingSend(clients, self.model, self.request, self.more)


class DecodingSend:
    """One request sent and its answer decoded, on the calling thread's client; with ``more``
    the requests are sent in turn."""

    def __init__(
        self,
        clients: ThreadClients,
        model: ManifestModel,
        request: PreparedRequest,
        more: tuple[PreparedRequest, ...] = (),
    ):
        self.clients, self.model, self.request = clients, model, request
        self._turns = itertools.cycle((request, *more))
        self._lock = threading.Lock()
        self._many = bool(more)

    def __call__(self) -> object:
        client = self.clients.get()
        request = self.request
        if self._many:
            with self._lock:
                request = next(self._turns)
        return client.decode(self.model, client.send(self.model, request))

    def close(self) -> None:
        self.clients.close()


def run_bench(
    make_client: Callable[[], InferenceTarget],
    model: ManifestModel,
    request: PreparedRequest,
    load: Load,
    runs_on: RunsOn,
    batch: int = 1,
    progress: Callable[[int], None] = lambda done: None,
    more: tuple[PreparedRequest, ...] = (),
) -> dict[str, Any]:
    """Measure and return the ``tdk bench --json`` record (``batch``: inferences per request);
    ``progress(1)`` after the cold request and after each load level.

    Every answer is decoded: an HTTP 200 whose body is not a Triton response counts as a
    ``bad_response`` error, not a success. Each level carries ``windows``, ``spread``,
    ``stable`` and ``client_bound`` (the generator, not the server, was the limit).
    """
    factory = BenchSender(make_client, model, request, more)
    send = factory()
    driver: Driver | None = None
    cold_ms: float | None = None
    warm_ms: float | None = None
    probe_errors: Counter[str] = Counter()
    levels: list[dict[str, Any]] = []
    interrupted: int | None = None
    try:
        cold_ms, warm_ms, probe_errors = loadgen.cold_then_warm(send)
        progress(1)
        if load.rate is not None:
            rate = load.rate
            levels.append(_level(lambda: _open_window(send, rate, load), load))
            progress(1)
        else:
            driver = Processes(factory, load.processes) if load.processes > 1 else InProcess(send)
            for clients_n in load.concurrency:
                window = _closed_window(driver, clients_n, load.duration_s)
                levels.append(_level(window, load))
                progress(1)
    except KeyboardInterrupt as exc:  # Ctrl-C (or SIGTERM): report the levels finished
        interrupted = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
    finally:
        if driver is not None:
            driver.close()
        send.close()
    return {
        "target": runs_on.target,
        "instance_type": runs_on.instance_type,
        "gpu": runs_on.gpu,
        "target_model": model.target_model,
        "model": model.name,
        "concurrency": list(load.concurrency) if load.rate is None else None,
        "rate": load.rate,
        "duration_s": load.duration_s,
        "stability_percentage": load.stability.percentage,
        "max_windows": load.stability.max_windows,
        "processes": load.processes if load.rate is None else 1,
        "batch": batch,
        "body_bytes": len(request.body),
        "requests_cycled": 1 + len(more),
        "cold_ms": None if cold_ms is None else round(cold_ms, 3),
        "first_warm_ms": None if warm_ms is None else round(warm_ms, 3),
        "probe_errors": dict(probe_errors),
        "client_bound": any(level["client_bound"] for level in levels),
        "levels": levels,
        #: the signal that stopped the sweep (None: it ran to the end)
        "interrupted": interrupted,
    }


def _closed_window(driver: Driver, clients: int, duration_s: float) -> Callable[[], loadgen.Window]:
    return lambda: driver.window(clients, duration_s)


def _open_window(send: loadgen.Send, rate: float, load: Load) -> loadgen.Window:
    before = cpu_seconds()
    result = loadgen.open_loop(send, rate, load.duration_s, poisson=load.poisson)
    busy = (cpu_seconds() - before) / result.duration_s if result.duration_s else 0.0
    return loadgen.Window(result, busy)


def _level(window: Callable[[], loadgen.Window], load: Load) -> dict[str, Any]:
    point = loadgen.measure_stable(window, load.stability)
    return {**point.result.summary(), **point.fields()}
