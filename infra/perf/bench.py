"""``tdk bench``'s measurement: a cold/warm probe, then closed-loop levels or one open-loop rate,
recorded with what it ran on so ``tdk plan`` can size a fleet from it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from infra.clients.base import InferenceTarget, PreparedRequest
from infra.perf import loadgen
from packager.manifest import ManifestModel


@dataclass(frozen=True)
class Load:
    """Closed loop at each of ``concurrency``, or open loop at ``rate`` when given."""

    concurrency: tuple[int, ...] = (1, 2, 4, 8)
    rate: float | None = None
    poisson: bool = False
    duration_s: float = 5.0


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


def run_bench(
    make_client: Callable[[], InferenceTarget],
    model: ManifestModel,
    request: PreparedRequest,
    load: Load,
    runs_on: RunsOn,
    batch: int = 1,
    progress: Callable[[int], None] = lambda done: None,
) -> dict[str, Any]:
    """Measure and return the ``tdk bench --json`` record (``batch``: inferences per request);
    ``progress(1)`` after the cold request and after each load level.

    Every answer is decoded: an HTTP 200 whose body is not a Triton response counts as a
    ``bad_response`` error, not a success.
    """
    clients = ThreadClients(make_client)

    def send() -> object:
        client = clients.get()
        return client.decode(model, client.send(model, request))

    try:
        cold_ms, warm_ms, probe_errors = loadgen.cold_then_warm(send)
        progress(1)
        if load.rate is not None:
            results = [loadgen.open_loop(send, load.rate, load.duration_s, poisson=load.poisson)]
            progress(1)
        else:
            results = []
            for clients_n in load.concurrency:
                results.append(loadgen.closed_loop(send, clients_n, load.duration_s))
                progress(1)
    finally:
        clients.close()
    return {
        "target": runs_on.target,
        "instance_type": runs_on.instance_type,
        "gpu": runs_on.gpu,
        "target_model": model.target_model,
        "model": model.name,
        "concurrency": list(load.concurrency) if load.rate is None else None,
        "rate": load.rate,
        "duration_s": load.duration_s,
        "batch": batch,
        "body_bytes": len(request.body),
        "cold_ms": None if cold_ms is None else round(cold_ms, 3),
        "first_warm_ms": None if warm_ms is None else round(warm_ms, 3),
        "probe_errors": dict(probe_errors),
        "levels": [result.summary() for result in results],
    }
