"""The multi-model flight simulator behind ``tdk plan --mme-trace``: replay a trace of
TargetModels against N pods, each holding at most ``budget`` loaded models (least recently used
unloaded first), routed as the kit routes them on Kubernetes and behind ``tdk local up
--replicas``: a consistent hash of the TargetModel with a bounded load (a pod already holding
its share of ``factor`` x the requests in flight is skipped for the next pod on the ring, so a
hot model spills over), bounded as Envoy bounds it (the stacks' engine, the default) or as
HAProxy does (``tdk local up --replicas``; ``infra.planning.routing``), or round robin for
comparison.

Pure: no clock, no I/O but ``read_trace``. Cold requests cost the measured download + Triton
load + the warm latency; the measurements come from ``bench/mme_k8s.py --json``. Which pod a
hash picks differs between engines (Envoy's ring, HAProxy's tree, this module's BLAKE2 ring),
so a prediction is statistical: on a 1,000-copy Zipf(1.0) trace, ten ring seeds spread the hit
ratio by under one point (measured 2026-12-07).
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import re
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from infra.planning.routing import ENGINES, HASH_BALANCE_FACTOR, most_held
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
    """A consistent-hash ring of ``pods`` pods (a count: pods 0..n-1, or the pods' numbers),
    ``VNODES`` points each."""

    def __init__(self, pods: int | Sequence[int], seed: str = "") -> None:
        ids = range(pods) if isinstance(pods, int) else pods
        points = sorted((_point(f"{seed}/pod-{p}/{v}"), p) for p in ids
                        for v in range(VNODES))  # fmt: skip
        self.keys = [k for k, _ in points]
        self.owners = [p for _, p in points]
        self.pods = len(ids)
        #: each pod's place in the order the pods were given (a configuration's server order)
        self.index = {pod: at for at, pod in enumerate(ids)}

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
    waited: int = 0  # requests that waited for a load another request started (cold, no load)

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.requests

    @property
    def cold_ratio(self) -> float:
        """The share of requests that were not answered from a loaded model."""
        return (self.requests - self.hits) / self.requests


def _check(pods: int, budget: int, concurrency: int, factor: float) -> None:
    if not 1 <= pods <= MAX_PODS:
        raise UsageError(f"pods {pods}: expected 1 to {MAX_PODS}", hint="e.g. --max-pods 8")
    if not 1 <= budget <= MAX_BUDGET:
        raise UsageError(f"budget {budget}: expected 1 to {MAX_BUDGET} models per pod",
                         hint="e.g. --budget 20")  # fmt: skip
    if concurrency < 1 or not 1.0 <= factor <= 100.0:
        raise UsageError(
            f"concurrency {concurrency}, balance factor {factor}: expected >= 1",
            hint="the balance factor is Envoy's hash_balance_factor / 100",
        )


#: a change of membership: before request ``index``, a pod ``join``s or the oldest ``leave``s
Change = tuple[int, str]


def simulate(
    trace: Sequence[str],
    pods: int,
    budget: int,
    routing: str = "hash",
    concurrency: int = 1,
    factor: float = HASH_BALANCE_FACTOR / 100,
    changes: Sequence[Change] = (),
    costs: Measured | None = None,
    headroom: int = 0,
    engine: str = "envoy",
) -> Flight:
    """Replay ``trace`` with ``concurrency`` clients, each sending its next request when its
    last one is answered (a warm request takes ``costs.warm_ms``, a cold one ``cold_ms``; a
    request for a model still loading on its pod waits for it and is cold too). With ``hash``
    routing a pod that holds as many requests as ``engine`` (``envoy`` or ``haproxy``) lets it at
    ``factor`` is skipped for the next on the ring (the bounded load,
    ``infra.planning.routing.most_held``); with ``round_robin`` pods take turns.
    ``changes`` replay replicas joining (empty) and leaving (their models gone), as
    ``bench/mme_k8s.py`` does mid-run. A pod keeps ``headroom`` models' room free once a load
    fills it (the front's ``--headroom-models``: the least recently used goes ahead of the
    next load), so ``budget - headroom`` stay loaded between loads."""
    _check(pods, budget, concurrency, factor)
    if engine not in ENGINES:
        raise UsageError(f"engine {engine!r}: expected {' or '.join(ENGINES)}", hint="envoy")
    if routing not in ("hash", "round_robin"):
        raise UsageError(f"routing {routing!r}: expected hash or round_robin", hint="hash")
    costs = costs or Measured(download_ms=0.0, load_ms=1000.0, warm_ms=1.0)
    keep = budget - headroom if budget > headroom else budget
    members = list(range(pods))
    pending = sorted(changes)
    ring = Ring(members) if routing == "hash" else None
    caches: dict[int, OrderedDict[str, float]] = {p: OrderedDict() for p in members}
    inflight = dict.fromkeys(members, 0)
    clients = [(0.0, c) for c in range(concurrency)]
    answered: list[tuple[float, int]] = []  # (end, pod) of the requests in flight
    hits = loads = evictions = max_loaded = spilled = waited = 0
    for index, name in enumerate(trace):
        while pending and pending[0][0] <= index:
            _change(members, caches, inflight, pending.pop(0)[1])
            ring = Ring(members) if routing == "hash" else None
        now, client = heapq.heappop(clients)
        while answered and answered[0][0] <= now:
            _, done = heapq.heappop(answered)
            if done in inflight:
                inflight[done] -= 1
        if ring is None:
            pod = members[index % len(members)]
        else:
            pod, skipped = _bounded(ring, name, inflight, round(factor * 100), engine)
            spilled += skipped
        cache = caches[pod]
        ready = cache.get(name)
        if ready is not None and ready <= now:
            hits += 1
            took = costs.warm_ms
            cache.move_to_end(name)
        elif ready is not None:  # loading for an earlier request: wait for it
            waited += 1
            took = ready - now + costs.warm_ms
            cache.move_to_end(name)
        else:
            loads += 1
            took = costs.cold_ms
            cache[name] = now + costs.cold_ms - costs.warm_ms
            # the front takes the new model's room first (an eviction, or the headroom's)
            max_loaded = max(max_loaded, min(len(cache), budget))
            while len(cache) > keep:
                cache.popitem(last=False)
                evictions += 1
        inflight[pod] += 1
        heapq.heappush(answered, (now + took, pod))
        heapq.heappush(clients, (now + took, client))
    return Flight(pods, budget, len(trace), hits, loads, evictions, max_loaded, spilled, waited)


def _bounded(
    ring: Ring, name: str, inflight: dict[int, int], factor: int, engine: str
) -> tuple[int, bool]:
    """The first pod on ``name``'s walk of the ring that may take one more request (``engine``'s
    bounded load at ``factor`` percent), and whether it was not the first. ``inflight`` lists
    the pods in the order they were declared (HAProxy shares its slots out in that order)."""
    total, pods, index = sum(inflight.values()), len(inflight), ring.index
    order = ring.walk(name)
    first = pod = next(order)
    while inflight[pod] >= most_held(engine, total, pods, factor, index[pod]):
        pod = next(order, first)
        if pod == first:  # every pod is at its bound: the first one's
            break
    return pod, pod != first


def _change(
    members: list[int],
    caches: dict[int, OrderedDict[str, float]],
    inflight: dict[int, int],
    what: str,
) -> None:
    if what == "join":
        members.append(max(members, default=-1) + 1)
        caches[members[-1]] = OrderedDict()
        inflight[members[-1]] = 0
    elif what == "leave" and len(members) > 1:
        gone = members.pop(0)
        caches.pop(gone)
        inflight.pop(gone)
    else:
        raise UsageError(f"replica change {what!r}: expected join or leave (one pod stays)",
                         hint="bench/mme_k8s.py writes replica_changes")  # fmt: skip


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
    headroom: int = 0,
) -> list[FleetOption]:
    """Every (pods, budget) from 1 pod to ``max_pods``, hash-routed, priced per hour; each pod
    keeps ``headroom`` models' room free (``simulate``)."""
    return [
        FleetOption(
            simulate(trace, pods, budget, "hash", concurrency, costs=measured, headroom=headroom),
            pods * usd_per_pod_hour,
            measured,
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
    concurrency: int  # the bench's clients
    #: models' room each pod kept free (the bench's headroom_p50, else the front's
    #: --headroom-models; 0 in runs before it)
    headroom: int = 0


#: the keys read from the bench's JSON: (key, what it is)
BENCH_KEYS = (
    ("download_p50_ms", "median archive download, ms"),
    ("triton_load_p50_ms", "median Triton load, ms"),
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
    concurrency = data.get("clients", 1)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise UsageError(f"{path}: clients {concurrency!r} is not a count", hint=BENCH_HINT)
    headroom = data.get("headroom_models", 0)
    if isinstance(headroom, bool) or not isinstance(headroom, int) or not 0 <= headroom < 4096:
        raise UsageError(f"{path}: headroom_models {headroom!r} is not a count", hint=BENCH_HINT)
    # the room the replicas kept most of the time, where it grew with the cold loads (the
    # front's --headroom-max-models): a median of samples, so possibly a half
    kept = data.get("headroom_p50", headroom)
    if isinstance(kept, bool) or not isinstance(kept, int | float) or not 0 <= kept < 4096:
        raise UsageError(f"{path}: headroom_p50 {kept!r} is not a count", hint=BENCH_HINT)
    return Bench(Measured(*values), min(concurrency, 4096), round(kept))
