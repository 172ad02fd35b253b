"""Load a generate endpoint with streamed requests and report LLM serving metrics.

Definitions follow NVIDIA AIPerf's metrics reference
(https://docs.nvidia.com/aiperf/v0.13.0/reference/ai-perf-metrics-reference.md, checked
2026-11-26), per request then as p50/p90/p99 over the successful requests:

- TTFT: first response with text minus the request's start;
- e2e (AIPerf's request latency): last response minus the request's start;
- TPOT (AIPerf's inter-token latency): ``(e2e - TTFT) / (output tokens - 1)``, for requests
  with at least two output tokens;
- output tokens/s: all successful requests' output tokens over the benchmark's duration (first
  request's start to last response), requests/s likewise with requests.

Output tokens are counted by ``infra.clients.generate`` (one per streamed response with text;
AIPerf tokenizes the text instead). Every response is decoded and checked there; a failed or
broken stream counts as an error, by its code.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from infra.clients.generate import Generation

#: one streamed request: (prompt) -> Generation, raising on any failure
Generate = Callable[[str], Generation]
SOURCE = "https://docs.nvidia.com/aiperf/v0.13.0/reference/ai-perf-metrics-reference.md"


@dataclass(frozen=True)
class GenLoad:
    """How to load: ``concurrency`` clients (closed loop) or ``rate`` requests/s (open loop:
    evenly spaced, or ``poisson`` arrivals from a ``seed``), ``requests`` at most, prompts used in
    turn; an open loop sends nothing scheduled at or after ``deadline_s`` (None: no deadline)."""

    prompts: tuple[str, ...]
    requests: int
    concurrency: int = 1
    rate: float | None = None
    poisson: bool = False
    seed: int = 0
    deadline_s: float | None = None


def arrival_offsets(load: GenLoad) -> list[float]:
    """Seconds after the start at which each open-loop request is sent: ``i / rate``, or a
    Poisson process (exponential gaps of mean ``1 / rate`` from ``random.Random(seed)``, the
    first at 0), cut at the deadline. The same load always gives the same schedule."""
    rate = load.rate
    if rate is None or rate <= 0:
        return []
    rng = random.Random(load.seed)
    offsets: list[float] = []
    at = 0.0
    for index in range(load.requests):
        if not load.poisson:
            at = index / rate
        if load.deadline_s is not None and at >= load.deadline_s:
            break
        offsets.append(at)
        if load.poisson:
            at += rng.expovariate(rate)
    return offsets


@dataclass
class GenResult:
    """What the requests produced."""

    done: list[Generation] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    started: float = 0.0
    ended: float = 0.0


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """p50/p90/p99 by the nearest-rank method (None when there is no value)."""
    if not values:
        return {"p50": None, "p90": None, "p99": None}
    ordered = sorted(values)
    rank = {q: max(1, math.ceil(round(q * len(ordered), 9))) for q in (0.50, 0.90, 0.99)}
    return {
        "p50": round(ordered[rank[0.50] - 1], 3),
        "p90": round(ordered[rank[0.90] - 1], 3),
        "p99": round(ordered[rank[0.99] - 1], 3),
    }


def tpot_ms(generation: Generation) -> float | None:
    """AIPerf's inter-token latency of one request; None below two output tokens."""
    if generation.output_tokens < 2:
        return None
    return (generation.total_ms - generation.ttft_ms) / (generation.output_tokens - 1)


def summarize(result: GenResult, load: GenLoad) -> dict[str, Any]:
    """The ``tdk bench --prompt --json`` document."""
    duration = max(result.ended - result.started, 1e-9)
    tokens = sum(g.output_tokens for g in result.done)
    tpots = [value for g in result.done if (value := tpot_ms(g)) is not None]
    open_loop = load.rate is not None
    return {
        "mode": "rate" if open_loop else "concurrency",
        "level": load.rate if open_loop else load.concurrency,
        "arrival": ("poisson" if load.poisson else "constant") if open_loop else None,
        "seed": load.seed if open_loop and load.poisson else None,
        "deadline_s": load.deadline_s if open_loop else None,
        "requests": load.requests,
        "sent": result.sent,
        "unsent": load.requests - result.sent,
        "ok": len(result.done),
        "errors": sum(result.errors.values()),
        "error_kinds": dict(result.errors),
        "duration_s": round(duration, 3),
        "ttft_ms": percentiles([g.ttft_ms for g in result.done]),
        "tpot_ms": percentiles(tpots),
        "e2e_ms": percentiles([g.total_ms for g in result.done]),
        "output_tokens": tokens,
        "output_tokens_per_s": round(tokens / duration, 3),
        "requests_per_s": round(len(result.done) / duration, 3),
        "definitions": SOURCE,
    }


def _error_code(exc: BaseException) -> str:
    return str(getattr(exc, "code", "") or exc.__class__.__name__)


def run_genbench(
    generate: Generate, load: GenLoad, advance: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Send ``load.requests`` streamed requests and summarize them."""
    result = GenResult()
    lock = threading.Lock()

    def one(index: int) -> None:
        prompt = load.prompts[index % len(load.prompts)]
        try:
            generation = generate(prompt)
        except Exception as exc:  # counted, never raised: one bad request is a data point
            with lock:
                result.errors[_error_code(exc)] += 1
        else:
            with lock:
                result.done.append(generation)
        with lock:
            result.ended = time.perf_counter()
        if advance is not None:
            advance(1)

    result.started = time.perf_counter()
    if load.rate is None:
        _closed_loop(one, load.requests, load.concurrency)
        result.sent = load.requests
    else:
        result.sent = _open_loop(one, arrival_offsets(load), result.started)
    return summarize(result, load)


def _closed_loop(one: Callable[[int], None], requests: int, concurrency: int) -> None:
    taken = iter(range(requests))
    lock = threading.Lock()

    def client() -> None:
        while True:
            with lock:
                index = next(taken, None)
            if index is None:
                return
            one(index)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _open_loop(one: Callable[[int], None], offsets: list[float], start: float) -> int:
    """Request ``i`` is sent at ``start + offsets[i]`` whatever the earlier ones are doing;
    returns how many were sent (the pool then waits for those in flight)."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(offsets), 256))) as pool:
        for index, offset in enumerate(offsets):
            delay = start + offset - time.perf_counter()
            if delay > 0:
                time.sleep(delay)  # pacing the arrivals, not synchronising with the server
            pool.submit(one, index)
    return len(offsets)
