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

Input sequence length: the words of each successful request's prompt (whitespace-separated: no
tokenizer is loaded, so a model's tokenizer count is usually higher; AIPerf tokenizes the prompt).
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
#: how ``input_sequence_length`` is counted, said in the JSON and the table
INPUT_COUNTED_AS = "whitespace-separated words of the prompt (no tokenizer)"


def input_length(prompt: str) -> int:
    """One prompt's input sequence length, as ``INPUT_COUNTED_AS`` says."""
    return len(prompt.split())


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
    input_lengths: list[int] = field(default_factory=list)  # of the done requests' prompts
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


#: AIPerf's metric tags (its metrics reference, v0.13.0) and the statistics it reports
STATS = ("avg", "min", "max", "std", "p50", "p90", "p99")
#: the per-request metrics ``--goodput`` may constrain, and whether lower is better (AIPerf's
#: goodput: requests per second whose every constrained metric meets its SLO)
GOODPUT_METRICS = {
    "time_to_first_token": True, "inter_token_latency": True, "request_latency": True,
    "output_token_throughput_per_user": False,
}  # fmt: skip


def stats(values: Sequence[float]) -> dict[str, float | None]:
    """avg, min, max, std (population, as numpy's default) and p50/p90/p99 (nearest rank)."""
    if not values:
        return dict.fromkeys(STATS, None)
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return {"avg": round(mean, 3), "min": round(min(values), 3), "max": round(max(values), 3),
            "std": round(std, 3), **percentiles(values)}  # fmt: skip


def request_metrics(generation: Generation) -> dict[str, float]:
    """One request's AIPerf record metrics (ms, tokens, tokens/s per user)."""
    found = {
        "time_to_first_token": generation.ttft_ms,
        "request_latency": generation.total_ms,
        "output_sequence_length": float(generation.output_tokens),
    }
    itl = tpot_ms(generation)
    if itl is not None:
        found["inter_token_latency"] = itl
        if itl > 0:
            found["output_token_throughput_per_user"] = 1000.0 / itl
    return found


def meets(found: dict[str, float], slos: dict[str, float]) -> bool:
    """Whether one request meets every SLO (a metric it lacks fails it, as in AIPerf)."""
    for name, limit in slos.items():
        value = found.get(name)
        if value is None or (value > limit if GOODPUT_METRICS[name] else value < limit):
            return False
    return True


def aiperf_metrics(
    result: GenResult, duration: float, slos: dict[str, float] | None
) -> dict[str, Any]:
    """The AIPerf-named metrics of a run: each record metric's statistics, the throughputs,
    and goodput under ``slos`` (None: not asked)."""
    records = [request_metrics(g) for g in result.done]
    names = ("time_to_first_token", "inter_token_latency", "request_latency",
             "output_token_throughput_per_user", "output_sequence_length")  # fmt: skip
    found: dict[str, Any] = {n: stats([r[n] for r in records if n in r]) for n in names}
    tokens = sum(g.output_tokens for g in result.done)
    found["input_sequence_length"] = stats(result.input_lengths)
    found["output_token_throughput"] = round(tokens / duration, 3)
    found["request_throughput"] = round(len(records) / duration, 3)
    good = sum(meets(r, slos) for r in records) if slos else None
    found["goodput"] = None if good is None else round(good / duration, 3)
    return found


def summarize(
    result: GenResult, load: GenLoad, slos: dict[str, float] | None = None
) -> dict[str, Any]:
    """The ``tdk bench generate --json`` document (one load level)."""
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
        "input_sequence_length_counted_as": INPUT_COUNTED_AS,
        "output_tokens_per_s": round(tokens / duration, 3),
        "requests_per_s": round(len(result.done) / duration, 3),
        "metrics": aiperf_metrics(result, duration, slos),
        "goodput_slos": slos,
        "definitions": SOURCE,
    }


def _error_code(exc: BaseException) -> str:
    return str(getattr(exc, "code", "") or exc.__class__.__name__)


def run_genbench(
    generate: Generate,
    load: GenLoad,
    advance: Callable[[int], None] | None = None,
    slos: dict[str, float] | None = None,
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
                result.input_lengths.append(input_length(prompt))
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
    return summarize(result, load, slos)


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
