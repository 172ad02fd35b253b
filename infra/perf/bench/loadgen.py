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
    client_s: float = 0.0  # the client threads' CPU demand (running + waiting to run), seconds

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
        data.pop("client_s")
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


def thread_demand_s() -> float:
    """CPU the calling thread has used or waited to run for, in seconds: Linux's
    ``/proc/thread-self/schedstat`` (time on a CPU, time runnable on a run queue), so a client
    starved by a busy machine counts as busy; elsewhere its CPU time alone."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as handle:
            running, waiting = handle.read().split()[:2]
    except (OSError, ValueError):
        return time.thread_time()
    return (int(running) + int(waiting)) / 1e9


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
        started = thread_demand_s()
        while take():
            _record(result, lock, send, time.perf_counter())
        used = thread_demand_s() - started
        with lock:
            result.client_s += used

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


# --- stable points: windows until the last three agree -------------------------------------
# The method is perf_analyzer's: a load level is measured in windows until the max/min ratio of
# the last 3 windows is within the stability percentage, for both throughput and latency (its
# `--stability-percentage`, default 10, and `--max-trials`, default 10). Source:
# https://github.com/triton-inference-server/client/blob/main/src/c%2B%2B/perf_analyzer/docs/cli.md
# (checked 2026-11-26).
STABLE_WINDOWS = 3
CLIENT_BOUND_CPU = 0.85  # a generator process busy this share of one core is the limit (GIL)


#: the closed-loop client counts `tdk bench` and `tdk tune` sweep when not told (one default)
DEFAULT_CONCURRENCY: tuple[int, ...] = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class Stability:
    """When a point is stable: the last ``STABLE_WINDOWS`` windows agree within ``percentage``
    (max/min of throughput and of mean latency), or ``max_windows`` were measured."""

    percentage: float = 10.0
    max_windows: int = 10

    def check(self) -> None:
        from tdk.errors import UsageError

        if not 0 < self.percentage < 1000:
            raise UsageError(f"--stability {self.percentage:g}: expected a percentage > 0", "10")
        if self.max_windows < 1:
            raise UsageError(f"--max-windows {self.max_windows}: expected >= 1", "e.g. 10")


@dataclass
class Window:
    """One measurement window: what it produced and the busiest generator process's CPU use
    (cores: 1.0 is one core busy the whole window)."""

    result: Result
    client_cpu: float
    extra: dict[str, float] = field(default_factory=dict)  # e.g. GPU metrics read after it


@dataclass
class StablePoint:
    """A load level measured until stable: the last windows merged, and how it got there."""

    result: Result
    windows: int
    spread: float  # max/min - 1 over the last windows, the larger of throughput and latency
    stable: bool
    client_cpu: float  # mean over the merged windows, cores of the busiest process
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def client_bound(self) -> bool:
        """True when the generator, not the server, was the limit."""
        return self.client_cpu >= CLIENT_BOUND_CPU

    def fields(self) -> dict[str, Any]:
        """The stability fields every point's JSON carries."""
        return {
            "windows": self.windows,
            "spread": None if math.isinf(self.spread) else round(self.spread, 4),
            "stable": self.stable,
            "client_bound": self.client_bound,
            "client_cpu": round(self.client_cpu, 3),
            **{k: round(v, 4) for k, v in self.extra.items()},
        }


def _ratio(values: list[float]) -> float:
    low, high = min(values), max(values)
    if high <= 0:
        return 0.0
    return math.inf if low <= 0 else high / low - 1


def spread_of(results: list[Result]) -> float:
    """max/min - 1 of throughput and of mean latency over ``results``, the larger."""
    means = [statistics.fmean(r.latencies_ms) if r.latencies_ms else 0.0 for r in results]
    return max(_ratio([r.throughput for r in results]), _ratio(means))


def merge(results: list[Result]) -> Result:
    """One result from consecutive windows of the same level."""
    merged = Result(results[0].mode, results[0].level)
    for result in results:
        merged.duration_s += result.duration_s
        merged.ok += result.ok
        merged.errors.update(result.errors)
        merged.latencies_ms.extend(result.latencies_ms)
        merged.client_s += result.client_s
    return merged


def measure_stable(window: Callable[[], Window], stability: Stability) -> StablePoint:
    """Windows from ``window()`` until the last ``STABLE_WINDOWS`` agree, or the cap; a window
    in which no request succeeded ends the level, never stable (0 rps in every window agrees,
    and measures nothing)."""
    windows: list[Window] = []
    spread, stable = math.inf, False
    while len(windows) < stability.max_windows:
        windows.append(window())
        if windows[-1].result.ok == 0 and windows[-1].result.errors:
            break  # every request of the window failed: more windows measure nothing more
        last = windows[-STABLE_WINDOWS:]
        if len(last) == STABLE_WINDOWS:
            spread = spread_of([w.result for w in last])
            if spread <= stability.percentage / 100 and all(w.result.ok for w in last):
                stable = True
                break
    last = windows[-STABLE_WINDOWS:]
    if last[-1].result.ok == 0 and last[-1].result.errors:
        last, spread, stable = last[-1:], math.inf, False
    elif len(last) < STABLE_WINDOWS:
        spread = spread_of([w.result for w in last]) if len(last) > 1 else math.inf
    keys = {key for w in last for key in w.extra}
    extra = {k: statistics.fmean(w.extra[k] for w in last if k in w.extra) for k in sorted(keys)}
    return StablePoint(
        merge([w.result for w in last]),
        len(windows),
        spread,
        stable,
        statistics.fmean(w.client_cpu for w in last),
        extra,
    )
