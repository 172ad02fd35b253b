"""A small load generator: closed-loop concurrency or open-loop arrivals (constant or Poisson).

``send`` is any callable doing one request (an InferenceTarget's ``send`` bound to a prepared
body); failures are counted by their code. Open-loop latency is measured from each request's
scheduled time, so a slow server cannot hide its queueing (no coordinated omission).
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

Send = Callable[[], object]


@dataclass
class Result:
    """What one load level produced (latencies in milliseconds)."""

    mode: str  # "concurrency" or "rate"
    level: float  # clients, or requests per second
    duration_s: float = 0.0
    ok: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return self.ok / self.duration_s if self.duration_s else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("latencies_ms")
        data["errors"] = dict(self.errors)
        data.update(
            throughput_rps=round(self.throughput, 2),
            p50_ms=round(self.percentile(0.50), 3),
            p90_ms=round(self.percentile(0.90), 3),
            p99_ms=round(self.percentile(0.99), 3),
            mean_ms=round(statistics.fmean(self.latencies_ms), 3) if self.latencies_ms else 0.0,
        )
        return data


def _error_code(exc: BaseException) -> str:
    return str(getattr(exc, "code", "") or exc.__class__.__name__)


def _record(result: Result, lock: threading.Lock, send: Send, start: float) -> None:
    try:
        send()
    except Exception as exc:
        with lock:
            result.errors[_error_code(exc)] += 1
        return
    elapsed = (time.perf_counter() - start) * 1000
    with lock:
        result.ok += 1
        result.latencies_ms.append(elapsed)


def closed_loop(send: Send, concurrency: int, duration_s: float, requests: int = 0) -> Result:
    """``concurrency`` clients each sending back to back for ``duration_s`` (or ``requests``)."""
    result = Result("concurrency", concurrency)
    lock = threading.Lock()
    deadline = time.perf_counter() + duration_s
    budget = [requests]

    def take() -> bool:
        if requests:
            with lock:
                budget[0] -= 1
                return budget[0] >= 0
        return time.perf_counter() < deadline

    def client() -> None:
        while take():
            _record(result, lock, send, time.perf_counter())

    started = time.perf_counter()
    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.duration_s = time.perf_counter() - started
    return result


def open_loop(
    send: Send,
    rate: float,
    duration_s: float,
    poisson: bool = False,
    seed: int = 0,
    workers: int = 64,
) -> Result:
    """Requests arriving at ``rate`` per second (evenly spaced, or Poisson) for ``duration_s``."""
    result = Result("rate", rate)
    lock = threading.Lock()
    rng = random.Random(seed)
    started = time.perf_counter()
    # A constant rate sends exactly ceil(rate * duration) requests: each arrival is computed
    # from its index, so no float accumulation decides the count. Poisson gaps are random.
    count = math.ceil(rate * duration_s - 1e-9) if not poisson else None
    offset = 0.0
    index = 0
    with ThreadPoolExecutor(workers) as pool:
        while True:
            if count is not None:
                if index >= count:
                    break
                offset = index / rate
            elif offset >= duration_s:
                break
            scheduled = started + offset
            delay = scheduled - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(_record, result, lock, send, scheduled)
            index += 1
            if count is None:
                offset += rng.expovariate(rate)
    result.duration_s = time.perf_counter() - started
    return result


def cold_then_warm(send: Send) -> tuple[float | None, float | None, Counter[str]]:
    """Latency of the first request (cold: may load the model) and of the second (warm), ms;
    None for a probe that failed, counted by its code in the third item."""
    times: list[float | None] = []
    errors: Counter[str] = Counter()
    for _ in range(2):
        started = time.perf_counter()
        try:
            send()
        except Exception as exc:
            errors[_error_code(exc)] += 1
            times.append(None)
            continue
        times.append((time.perf_counter() - started) * 1000)
    return times[0], times[1], errors
