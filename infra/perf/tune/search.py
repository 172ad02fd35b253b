"""``tdk tune``: measure configurations of one model and pick the fastest within a latency budget.

Each configuration is loaded into one Triton and driven by the closed-loop load generator at
rising concurrency. ``full`` measures the whole grid at every concurrency; ``quick`` climbs from
the shipped configuration one knob at a time (the dynamic batcher first) and stops a sweep once
p99 leaves the budget or throughput stops growing for two levels. The objective is the
highest throughput whose p99 is within the budget, with no errors.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from infra.perf.bench import loadgen
from infra.perf.bench.drive import DEFAULT_PROCESSES, Driver, InProcess
from infra.perf.bench.loadgen import DEFAULT_CONCURRENCY, Stability
from infra.perf.bench.placement import Placement
from infra.perf.tune.space import Knobs, Space

SATURATION_GAIN = 1.05  # quick: a level adding under 5% throughput counts as saturated ...
SATURATION_LEVELS = 2  # ... and this many saturated levels in a row end the sweep (batching
# configurations often gain only from the higher levels, so one flat level is not enough)
CLIMB_GAIN = 1.02  # quick: a neighbour must beat the current best by 2% to move there ...
# ... and by more than both points' measured spreads (a gain inside the noise is no gain)
GPU_SATURATED = 0.95  # nv_gpu_utilization at or above this: more instances cannot help


@dataclass(frozen=True)
class Point:
    """One load level of one configuration."""

    knobs: Knobs
    concurrency: int
    throughput_rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    errors: int
    windows: int = 1
    spread: float = 0.0  # max/min - 1 over the last windows (inf: too few windows to tell)
    stable: bool = True
    client_bound: bool = False
    gpu_utilization: float | None = None  # 0..1, the busiest GPU, with --metrics-url
    gpu_memory_used_bytes: float | None = None
    drift: float = 0.0  # max/min - 1 of one point measured again on this server (probe_drift)

    @property
    def noise(self) -> float:
        """The relative spread a comparison must beat: the windows' spread (an unknown one
        counts as none), but never less than the server's measured drift between points."""
        return max(0.0 if math.isinf(self.spread) else self.spread, self.drift)

    def within(self, budget_ms: float) -> bool:
        return self.errors == 0 and self.ok() and self.p99_ms <= budget_ms

    def ok(self) -> bool:
        return self.throughput_rps > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.knobs.to_dict(),
            "label": self.knobs.label(),
            "concurrency": self.concurrency,
            "throughput_rps": round(self.throughput_rps, 2),
            "p50_ms": round(self.p50_ms, 3),
            "p90_ms": round(self.p90_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
            "errors": self.errors,
            "windows": self.windows,
            "spread": None if math.isinf(self.spread) else round(self.spread, 4),
            "stable": self.stable,
            "client_bound": self.client_bound,
            "gpu_utilization": self.gpu_utilization,
            "gpu_memory_used_bytes": self.gpu_memory_used_bytes,
            "drift": round(self.drift, 4),
            "noise": round(self.noise, 4),
        }


def beats(candidate: Point, incumbent: Point, margin: float) -> bool:
    """Whether ``candidate``'s throughput beats ``incumbent``'s by more than ``margin`` and more
    than either point's spread."""
    needed = max(margin - 1, candidate.noise, incumbent.noise)
    return candidate.throughput_rps > incumbent.throughput_rps * (1 + needed)


def inside_noise(candidate: Point, incumbent: Point, margin: float) -> bool:
    """A gain above ``margin`` that the spreads do not let us believe."""
    return candidate.throughput_rps > incumbent.throughput_rps * margin and not beats(
        candidate, incumbent, margin
    )


@dataclass(frozen=True)
class Settings:
    """How long and how hard each configuration is driven."""

    budget_ms: float
    concurrency: tuple[int, ...] = DEFAULT_CONCURRENCY
    duration_s: float = 1.0  # one window
    warmup_requests: int = 4
    stability: Stability = field(default_factory=Stability)
    processes: int = DEFAULT_PROCESSES  # load-generator processes (1: this process's threads)
    # the shipped config's best point measured this many more times (probe_drift): windows of
    # one point agree more closely than points measured apart (measured: a 3-window spread of
    # 3-5 % beside 10-15 % between repeats of one point on a 2-core machine, docs/performance.md)
    repeats: int = 3
    # a gain inside the noise is settled by measuring both configs back to back this many times
    # (alternating which goes first): points measured seconds apart share the server's drift
    pairs: int = 3
    # where the server and the generator run (a local tune pins them apart by default: sharing
    # CPUs, where the scheduler puts them decides the figures; infra.perf.bench.placement)
    placement: Placement = field(default_factory=Placement)
    # ``--input NAME=...`` options: these tensors replace their example values in every request
    inputs: tuple[str, ...] = ()
    # ``--samples DIR``: requests read from .npz / .json files, sent in turn (None: examples)
    samples: Path | None = None


#: measures one configuration at one concurrency (tests and the CLI give a real one)
Measure = Callable[[Knobs, int], Point]
#: loads a configuration before its sweep
Prepare = Callable[[Knobs], None]
#: told after every configuration: (configs done, configs planned, best point so far)
Progress = Callable[[int, int, "Point | None"], None]


@dataclass
class Search:
    """Everything measured so far; survives a Ctrl-C so the best so far can be reported."""

    settings: Settings
    points: list[Point] = field(default_factory=list)
    configs_done: int = 0
    started: float = field(default_factory=time.monotonic)
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)  # decisions inside the noise, GPU stops
    drift: float = 0.0  # every point measured from now on carries it (probe_drift)
    again: list[Point] = field(default_factory=list)  # the best point measured again
    duels: list[Duel] = field(default_factory=list)  # gains inside the noise, settled

    def best(self, knobs: Knobs | None = None) -> Point | None:
        """The highest-throughput point within the budget (of ``knobs`` only, if given)."""
        budget = self.settings.budget_ms
        fits = [p for p in self.points if p.within(budget) and (knobs is None or p.knobs == knobs)]
        return max(fits, key=lambda p: (p.throughput_rps, -p.p99_ms), default=None)

    def score(self, knobs: Knobs) -> float:
        best = self.best(knobs)
        return best.throughput_rps if best else 0.0

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


def sweep(
    search: Search, knobs: Knobs, prepare: Prepare, measure: Measure, early_stop: bool
) -> None:
    """Load ``knobs`` and measure it at each concurrency (stopping early in quick mode)."""
    prepare(knobs)
    best, flat = 0.0, 0
    for level in search.settings.concurrency:
        point = replace(measure(knobs, level), drift=search.drift)
        search.points.append(point)
        if not early_stop:
            continue
        if not point.within(search.settings.budget_ms):
            break
        flat = flat + 1 if point.throughput_rps < best * SATURATION_GAIN else 0
        if flat >= SATURATION_LEVELS:
            break
        best = max(best, point.throughput_rps)
    search.configs_done += 1


def probe_drift(search: Search, measure: Measure, times: int | None = None) -> list[Point]:
    """Measure ``search``'s best point again (``times``, default ``settings.repeats``; its config
    must be loaded) and set ``search.drift`` to max/min - 1 of every measurement of it so far
    (``search.again`` keeps them); ``search``'s points carry the drift from then on. Returns the
    new measurements."""
    best = search.best()
    times = search.settings.repeats if times is None else times
    if best is None or times < 1:
        return []
    new = [measure(best.knobs, best.concurrency) for _ in range(times)]
    search.again += new
    rates = [p.throughput_rps for p in (best, *search.again)]
    # a measurement that served nothing failed; it says nothing about drift (max/min over a
    # growing set only grows, so raising the drift to it is setting it)
    carry_drift(search, max(rates) / min(rates) - 1 if min(rates) > 0 else 0.0)
    search.again[:] = [replace(p, drift=search.drift) for p in search.again]
    return search.again[-times:]


def typical(search: Search) -> Point | None:
    """``search``'s best point as the median of every measurement of it within the budget (its
    config at its concurrency: the sweep, the repeats, a duel's), the upper middle of an even
    count; it carries the search's drift. One measurement picked as the best of a sweep is the
    luckiest of several; the median of five is what the point serves."""
    best = search.best()
    if best is None:
        return None
    budget = search.settings.budget_ms
    same = [
        p
        for p in (*search.points, *search.again)
        if (p.knobs, p.concurrency) == (best.knobs, best.concurrency) and p.within(budget)
    ]
    ranked = sorted(same, key=lambda p: p.throughput_rps)
    return replace(ranked[len(ranked) // 2], drift=search.drift)


def carry_drift(search: Search, drift: float) -> None:
    """Raise ``search``'s drift (and its points') to ``drift`` if that is larger."""
    search.drift = max(search.drift, drift)
    search.points[:] = [replace(p, drift=max(p.drift, drift)) for p in search.points]


def drift_note(drift: float, stability: Stability) -> str | None:
    """Said when points measured apart varied more than one point's windows may."""
    if drift <= stability.percentage / 100:
        return None
    return (
        f"the shipped config's best point, measured again, varied by {drift:.0%}: gains smaller "
        "than that are treated as noise (a quieter server, or longer windows, narrow it)"
    )


@dataclass(frozen=True)
class Duel:
    """Two configs measured back to back in ``pairs``: ``ratios`` are candidate / incumbent
    throughput, one per pair (0.0 where either point failed or left the budget)."""

    incumbent: Knobs
    candidate: Knobs
    ratios: tuple[float, ...]
    margin: float
    said: str = ""  # the climb's note on it, replaced when the final duel continues it

    def same(self, incumbent: Knobs, candidate: Knobs) -> bool:
        """Whether this duel compared the same two configs."""
        return (self.incumbent.canonical(), self.candidate.canonical()) == (
            incumbent.canonical(),
            candidate.canonical(),
        )

    def then(self, later: Duel) -> Duel:
        """One duel of both's pairs: the same comparison measured again says one result."""
        return replace(later, ratios=self.ratios + later.ratios, said="")

    @property
    def median(self) -> float:
        return statistics.median(self.ratios) if self.ratios else 0.0

    @property
    def won(self) -> bool:
        """The candidate won every pair, and the median pair by more than the margin."""
        return bool(self.ratios) and min(self.ratios) > 1 and self.median > self.margin

    def describe(self) -> str:
        wins = sum(r > 1 for r in self.ratios)
        return (
            f"back to back, {self.candidate.label()} won {wins} of {len(self.ratios)} pairs "
            f"(median {self.median - 1:+.0%})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "incumbent": self.incumbent.label(),
            "candidate": self.candidate.label(),
            "ratios": [round(r, 4) for r in self.ratios],
            "won": self.won,
        }


def duel(
    search: Search,
    incumbent: Point,
    candidate: Point,
    prepare: Prepare,
    measure: Measure,
    loaded: Knobs | None,
    margin: float,
    filed: tuple[list[Point], list[Point]],
) -> Duel:
    """Measure ``incumbent`` and ``candidate`` (each at its own best concurrency) back to back,
    ``settings.pairs`` times, the first of each pair alternating (ABBA, so a steady drift
    favours neither; the config ``loaded`` now goes first, saving a reload). Each new point,
    carrying ``search``'s drift, joins ``filed`` (the incumbent's list, the candidate's) as soon
    as it is measured, so an interrupted duel's points are reported too."""
    budget = search.settings.budget_ms
    sides = (candidate, incumbent) if loaded != incumbent.knobs else (incumbent, candidate)
    into = {incumbent.knobs: filed[0], candidate.knobs: filed[1]}
    last: dict[Knobs, Point] = {}
    ratios = []
    for pair in range(search.settings.pairs):
        for side in sides if pair % 2 == 0 else sides[::-1]:
            if loaded != side.knobs:
                prepare(side.knobs)
                loaded = side.knobs
            point = replace(measure(side.knobs, side.concurrency), drift=search.drift)
            into[side.knobs].append(point)
            last[side.knobs] = point
        old, new = last[incumbent.knobs], last[candidate.knobs]
        fair = old.within(budget) and new.within(budget)
        ratios.append(new.throughput_rps / old.throughput_rps if fair else 0.0)
    return Duel(incumbent.knobs, candidate.knobs, tuple(ratios), margin)


def full_search(
    search: Search, space: Space, prepare: Prepare, measure: Measure, progress: Progress
) -> None:
    """Every configuration of the grid at every concurrency."""
    grid = space.grid()
    for knobs in grid:
        sweep(search, knobs, prepare, measure, early_stop=False)
        progress(search.configs_done, len(grid), search.best())


def quick_search(
    search: Search,
    space: Space,
    start: Knobs,
    prepare: Prepare,
    measure: Measure,
    progress: Progress,
) -> None:
    """First-improvement hill climb over the grid, one knob step at a time, from ``start``.

    A move needs a gain beyond both points' spreads, or, when the gain is inside them, a won
    duel (``settings.pairs`` back-to-back pairs); more instances are not tried once the GPU is
    saturated (``nv_gpu_utilization``, when the points carry it)."""
    total = len(space.grid())
    seen: set[Knobs] = set()

    def visit(index: tuple[int, ...]) -> Point | None:
        knobs = space.knobs(index)
        if knobs not in seen:
            sweep(search, knobs, prepare, measure, early_stop=True)
            seen.add(knobs)
            progress(search.configs_done, total, search.best())
        return search.best(knobs)

    current = space.nearest(start)
    current_best = visit(current)
    moved = True
    while moved:
        moved = False
        for candidate in space.neighbours(current):
            if _gpu_saturated(space, current, candidate, current_best, search):
                continue
            found = visit(candidate)
            if found is None:
                continue
            if current_best is None or beats(found, current_best, CLIMB_GAIN):
                current, current_best, moved = candidate, found, True
                break
            if inside_noise(found, current_best, CLIMB_GAIN) and _settled(
                search, current_best, found, prepare, measure
            ):
                current, current_best, moved = candidate, search.best(found.knobs), True
                break


def _settled(
    search: Search, incumbent: Point, candidate: Point, prepare: Prepare, measure: Measure
) -> bool:
    """A climb's gain inside the noise: settled by a duel (``settings.pairs``), and said either
    way (the climb's path, not the choice: that is the best point)."""
    said = (
        f"{candidate.throughput_rps:.1f} vs {incumbent.throughput_rps:.1f} rps, "
        f"inside the spread ({_pct(candidate)} / {_pct(incumbent)})"
    )
    step = f"from {incumbent.knobs.label()} to {candidate.knobs.label()}"
    if search.settings.pairs < 1:
        search.notes.append(f"did not climb {step}: {said}")
        return False
    filed = (search.points, search.points)
    result = duel(
        search, incumbent, candidate, prepare, measure, candidate.knobs, CLIMB_GAIN, filed
    )
    verb = "climbed" if result.won else "did not climb"
    note = f"{verb} {step}: {said}; {result.describe()}"
    search.duels.append(replace(result, said=note))
    search.notes.append(note)
    return result.won


def _pct(point: Point) -> str:
    """The noise a decision had to beat: the windows' spread or the drift, the larger."""
    return "unknown" if math.isinf(point.spread) and not point.drift else f"{point.noise:.0%}"


def _gpu_saturated(
    space: Space,
    current: tuple[int, ...],
    candidate: tuple[int, ...],
    best: Point | None,
    search: Search,
) -> bool:
    """Whether ``candidate`` adds instances to a config whose best point saturated the GPU."""
    more = space.knobs(candidate).instances > space.knobs(current).instances
    if not more or best is None or best.gpu_utilization is None:
        return False
    if best.gpu_utilization < GPU_SATURATED:
        return False
    note = (
        f"did not add instances to {best.knobs.label()}: "
        f"the GPU was {best.gpu_utilization:.0%} busy"
    )
    if note not in search.notes:
        search.notes.append(note)
    return True


def pareto_front(points: Sequence[Point]) -> list[Point]:
    """Points no other point beats on both throughput (higher) and p99 (lower), by p99."""
    good = [p for p in points if p.errors == 0 and p.ok()]
    front: list[Point] = []
    for point in sorted(good, key=lambda p: (p.p99_ms, -p.throughput_rps)):
        if not front or point.throughput_rps > front[-1].throughput_rps:
            front.append(point)
    return front


def measure_with(
    send_for: Callable[[Knobs], loadgen.Send],
    settings: Settings,
    metrics: Callable[[], dict[str, float]] | None = None,
) -> Callable[[Knobs, int], Point]:
    """A ``Measure`` driving this process's closed-loop generator through ``send_for(knobs)``."""

    def measure(knobs: Knobs, concurrency: int) -> Point:
        send = send_for(knobs)
        return measure_point(knobs, concurrency, InProcess(send), send, settings, metrics)

    return measure


def measure_point(
    knobs: Knobs,
    concurrency: int,
    driver: Driver,
    warm: loadgen.Send,
    settings: Settings,
    metrics: Callable[[], dict[str, float]] | None = None,
) -> Point:
    """Warm up with ``warm``, then windows on ``driver`` until stable (``settings.stability``);
    ``metrics()`` is read after each window (e.g. the GPU's utilization and memory)."""
    for _ in range(settings.warmup_requests):
        warm()

    def window() -> loadgen.Window:
        done = driver.window(concurrency, settings.duration_s)
        if metrics is not None:
            done.extra.update(metrics())
        return done

    stable = loadgen.measure_stable(window, settings.stability)
    result = stable.result
    return Point(
        knobs,
        concurrency,
        result.throughput,
        result.percentile(0.50),
        result.percentile(0.90),
        result.percentile(0.99),
        sum(result.errors.values()),
        stable.windows,
        stable.spread,
        stable.stable,
        stable.client_bound,
        stable.extra.get("gpu_utilization"),
        stable.extra.get("gpu_memory_used_bytes"),
    )
