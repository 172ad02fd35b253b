"""The multi-model flight simulator behind ``tdk plan --mme-trace``: replay a trace of
TargetModels against N pods, each holding at most ``budget`` loaded models (least recently used
unloaded first), routed as the kit routes them on Kubernetes and behind ``tdk local up
--replicas``: a consistent hash of the TargetModel with a bounded load (Envoy's and HAProxy's
``hash-balance-factor``: a pod already above ``factor`` x the mean in-flight count is skipped for
the next pod on the ring, so a hot model spills over), or round robin for comparison.

Pure: no clock, no I/O but ``read_trace``. Cold requests cost the measured download + Triton
load + the warm latency; the measurements come from ``bench/mme_k8s.py --json``. Which pod a
hash picks differs between engines (Envoy's ring, HAProxy's tree, this module's BLAKE2 ring),
so a prediction is statistical: on a 1,000-copy Zipf(1.0) trace, ten ring seeds spread the hit
ratio by under one point (measured 2026-12-07).
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tdk.bounded import read_document
from tdk.errors import UsageError

MAX_TRACE_BYTES = 256 * 1024 * 1024
MAX_REQUESTS = 5_000_000
MAX_PODS = 512
MAX_BUDGET = 100_000
VNODES = 160  # points per pod on the ring: Envoy's ring hash default minimum is 1,024 in all
_NAME = re.compile(r"[A-Za-z0-9._-]{1,255}")
TRACE_HINT = "one TargetModel per line (bert-3.tar.gz or bert-3), or CSV time,target_model"


def read_trace(path: Path) -> list[str]:
    """The TargetModels of the trace file ``path`` in order (``.tar.gz`` dropped): a regular
    UTF-8 file of one name per line, or a CSV whose last column is the TargetModel (a first
    row naming ``target_model`` is a header). Bounded in bytes and requests."""
    raw = read_document(path, f"--mme-trace: {TRACE_HINT}", MAX_TRACE_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--mme-trace {path} is not UTF-8 text ({exc.reason})",
                         hint=TRACE_HINT) from None  # fmt: skip
    out: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        cell = line.rsplit(",", 1)[-1].strip()
        if not cell or (number == 1 and cell.lower() in ("target_model", "targetmodel")):
            continue
        name = cell.removesuffix(".tar.gz")
        if not _NAME.fullmatch(name):
            raise UsageError(
                f"--mme-trace {path} line {number}: {cell[:80]!r} is not a TargetModel",
                hint=TRACE_HINT,
            )
        out.append(name)
        if len(out) > MAX_REQUESTS:
            raise UsageError(f"--mme-trace {path}: more than {MAX_REQUESTS:,} requests",
                             hint="replay a sample of the trace")  # fmt: skip
    if not out:
        raise UsageError(f"--mme-trace {path} holds no request", hint=TRACE_HINT)
    return out


def _point(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class Ring:
    """A consistent-hash ring of ``pods`` pods, ``VNODES`` points each."""

    def __init__(self, pods: int, seed: str = "") -> None:
        points = sorted((_point(f"{seed}/pod-{p}/{v}"), p) for p in range(pods)
                        for v in range(VNODES))  # fmt: skip
        self.keys = [k for k, _ in points]
        self.owners = [p for _, p in points]
        self.pods = pods

    def walk(self, name: str) -> Iterator[int]:
        """The pods in the order the ring offers them for ``name`` (each once)."""
        start = bisect.bisect(self.keys, _point(name))
        seen: set[int] = set()
        for i in range(len(self.keys)):
            pod = self.owners[(start + i) % len(self.keys)]
            if pod not in seen:
                seen.add(pod)
                yield pod
                if len(seen) == self.pods:
                    return


@dataclass(frozen=True)
class Flight:
    """What one replay saw."""

    pods: int
    budget: int
    requests: int
    hits: int
    loads: int
    evictions: int
    max_loaded: int  # the most models any pod held at once (never above budget)
    spilled: int  # requests the bounded load sent past their hash's first pod

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.requests

    @property
    def cold_ratio(self) -> float:
        return self.loads / self.requests


def _check(pods: int, budget: int, concurrency: int, factor: float) -> None:
    if not 1 <= pods <= MAX_PODS:
        raise UsageError(f"pods {pods}: expected 1 to {MAX_PODS}", hint="e.g. --max-pods 8")
    if not 1 <= budget <= MAX_BUDGET:
        raise UsageError(f"budget {budget}: expected 1 to {MAX_BUDGET} models per pod",
                         hint="e.g. --budget 20")  # fmt: skip
    if concurrency < 1 or not 1.0 <= factor <= 100.0:
        raise UsageError(
            f"concurrency {concurrency}, balance factor {factor}: expected >= 1",
            hint="the balance factor is HAProxy's hash-balance-factor / 100",
        )


def simulate(
    trace: Sequence[str],
    pods: int,
    budget: int,
    routing: str = "hash",
    concurrency: int = 1,
    factor: float = 1.5,
) -> Flight:
    """Replay ``trace``: requests go out ``concurrency`` at a time; with ``hash`` routing a pod
    whose in-flight count would pass ``ceil(factor x mean)`` is skipped for the next on the
    ring (bounded load), with ``round_robin`` pods take turns."""
    _check(pods, budget, concurrency, factor)
    if routing not in ("hash", "round_robin"):
        raise UsageError(f"routing {routing!r}: expected hash or round_robin", hint="hash")
    ring = Ring(pods) if routing == "hash" else None
    caches: list[OrderedDict[str, None]] = [OrderedDict() for _ in range(pods)]
    hits = loads = evictions = max_loaded = spilled = 0
    for start in range(0, len(trace), concurrency):
        inflight = [0] * pods
        for offset, name in enumerate(trace[start : start + concurrency]):
            if ring is None:
                pod = (start + offset) % pods
            else:
                bound = math.ceil(factor * (offset + 1) / pods)
                order = ring.walk(name)
                first = pod = next(order)
                while inflight[pod] >= bound:  # the ring holds a pod below the bound
                    pod = next(order, first)
                    if pod == first:
                        break
                spilled += pod != first
            inflight[pod] += 1
            cache = caches[pod]
            if name in cache:
                hits += 1
                cache.move_to_end(name)
                continue
            loads += 1
            cache[name] = None
            if len(cache) > budget:
                cache.popitem(last=False)
                evictions += 1
            max_loaded = max(max_loaded, len(cache))
    return Flight(pods, budget, len(trace), hits, loads, evictions, max_loaded, spilled)


@dataclass(frozen=True)
class Measured:
    """Per-request costs measured by ``bench/mme_k8s.py``: a cold request waits for the
    download and Triton's load, then runs as a warm one."""

    download_ms: float
    load_ms: float
    warm_ms: float

    @property
    def cold_ms(self) -> float:
        return self.download_ms + self.load_ms + self.warm_ms


@dataclass(frozen=True)
class FleetOption:
    """One (pods, budget) replayed and priced."""

    flight: Flight
    usd_per_hour: float
    measured: Measured

    @property
    def p99_ms_estimate(self) -> float:
        """The 99th percentile request: a cold one once more than 1 % of requests load a
        model, else a warm one."""
        m = self.measured
        return m.cold_ms if self.flight.cold_ratio > 0.01 else m.warm_ms


def fleet(
    trace: Sequence[str],
    measured: Measured,
    usd_per_pod_hour: float,
    max_pods: int,
    budgets: Sequence[int],
    concurrency: int = 1,
) -> list[FleetOption]:
    """Every (pods, budget) from 1 pod to ``max_pods``, hash-routed, priced per hour."""
    return [
        FleetOption(
            simulate(trace, pods, budget, "hash", concurrency), pods * usd_per_pod_hour, measured
        )
        for pods in range(1, max_pods + 1)
        for budget in budgets
    ]


def cheapest(options: Sequence[FleetOption], hit_ratio: float) -> FleetOption | None:
    """The lowest-cost option that reaches ``hit_ratio`` (fewest pods, then smallest budget,
    on a tie); None when none does."""
    good = [o for o in options if o.flight.hit_ratio >= hit_ratio]
    if not good:
        return None
    return min(good, key=lambda o: (o.usd_per_hour, o.flight.pods, o.flight.budget))


@dataclass(frozen=True)
class Bench:
    """What ``tdk plan --mme-trace`` reads of a ``bench/mme_k8s.py --json`` run."""

    costs: Measured
    concurrency: int


#: the keys read from the bench's JSON: (key, what it is)
BENCH_KEYS = (
    ("download_p50_ms", "median archive download, ms"),
    ("load_p50_ms", "median Triton load, ms"),
    ("warm_p50_ms", "median warm request, ms"),
)
BENCH_HINT = "pass the output of `bench/mme_k8s.py --json` (it measures them)"


def load_measured(path: Path) -> Bench:
    """The download, load and warm times and the client concurrency of a bench run."""
    from tdk.bounded import load_json

    data = load_json(path, BENCH_HINT)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a JSON object", hint=BENCH_HINT)
    values = []
    for key, what in BENCH_KEYS:
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UsageError(f"{path}: no number {key} ({what})", hint=BENCH_HINT)
        if not 0 <= value < 3_600_000:
            raise UsageError(f"{path}: {key} {value} is not a duration in ms", hint=BENCH_HINT)
        values.append(float(value))
    concurrency = data.get("concurrency", 1)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise UsageError(f"{path}: concurrency {concurrency!r} is not a count", hint=BENCH_HINT)
    return Bench(Measured(*values), min(concurrency, 4096))
