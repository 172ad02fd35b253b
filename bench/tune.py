"""``tdk tune`` on the sample ``ranker`` model (CPU), against its shipped config as the baseline.

``ranker`` (model_repos/generate.py ``--with ranker``) is a dense model whose cost per call is
reading its weights, so its throughput depends on batching; it ships as a first deployment is
often written (batching allowed, no dynamic batcher). One local Triton serves every
configuration, the search space is what ``tdk tune`` derives for the model on this server
(accelerators and threads included). The full grid and the quick hill climb run in the same
process; then the shipped config, the full grid's choice and the quick search's choice are
re-measured in rounds (``--rounds``), each in the reverse order of the one before, and the goals
are judged on the median of the ratios within each round (configs measured back to back share
the machine's drift; rounds a minute apart do not). Every point is measured as ``tdk tune``
measures it: windows until the last three agree within ``--stability`` % (or ``--max-windows``),
from generator processes. The quick search, as ``tdk tune``'s, starts with the shipped config's
sweep and drift probe, and its measurement count includes them. Last, the full grid's choice is
written as the model's config and ``tdk tune`` (quick) runs five times on it (``--tune-runs``;
two with ``--quick``), each with its own Triton: the shipped best each run reports should land
within its own reported noise (its windows' spread, or the drift of that point measured again,
if larger) of their median.
``--repeats-only`` runs only the quick search and the five tune runs of its choice.
Server and generator are placed as ``tdk tune`` places them (``--server-cpus`` /
``--client-cpus``, default auto: apart, infra/perf/bench/placement.py); ``all all`` leaves both
unpinned.
Run: ``.venv/bin/python bench/tune.py [--json] [--quick] [--repeats-only]``; the last line of
``--json`` is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infra.perf.bench.loadgen import Stability  # noqa: E402
from infra.perf.bench.placement import resolve  # noqa: E402
from infra.perf.tune.search import (  # noqa: E402
    Point,
    Search,
    Settings,
    full_search,
    measure_point,
    probe_drift,
    quick_search,
    sweep,
)
from infra.perf.tune.space import Knobs, Space, apply_knobs, shipped_knobs  # noqa: E402
from packager.config import CONFIG_NAME, load_config  # noqa: E402
from tdk.errors import UsageError  # noqa: E402
from tdk.numbers import parse_number  # noqa: E402
from tdk.signals import Terminated, terminations_interrupt  # noqa: E402

GOAL_SPEEDUP = 1.5
GOAL_QUICK_SHARE = 0.9  # quick reaches 90% of full's best
GOAL_QUICK_COST = 1 / 3  # with at most a third of full's measurements
GOAL_RUNS = 5  # tdk tune runs of one config, each landing within its reported noise


def _generate(work: Path) -> Path:
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.generate(work / "repo", ("ranker",))
    return work / "repo" / "ranker"


def _rps(point: Point | None) -> float:
    return round(point.throughput_rps, 2) if point else 0.0


@dataclass
class Measured:
    full: Search
    quick: Search
    tuned: Knobs | None  # None: the searches met no point, and the later steps did not run
    quick_choice: Knobs | None
    rounds: dict[Knobs, list[float]]
    repeats: list[Point]
    full_s: float
    quick_s: float
    probe_n: int  # the shipped sweep and repeats before the climb (counted as quick's)
    failed: list[str]  # the steps that measured nothing, and why (the goals they judge unmet)


def _space(quick: bool) -> tuple[Space, tuple[int, ...]]:
    if quick:  # 8 configs: 2 instance counts x dynamic batching or not x each accelerator
        quick_space = Space(
            instances=(1, 2), max_batch_size=(8,), max_queue_delay_us=(0,), preferred=(False,)
        )
        return quick_space, (1, 2)
    return Space(), (1, 2, 4, 8, 16)


@dataclass
class _Rig:
    """One Triton and one generator: every step loads and measures through these."""

    settings: Settings
    prepare: Callable[[Knobs], None]
    measure: Callable[[Knobs, int], Point]

    def progress(self, done: int, total: int, best: Point | None) -> None:
        print(f"  {done}/{total} configs, best {_rps(best)} rps", file=sys.stderr)

    def full(self, space: Space) -> tuple[Search, float]:
        started, search = time.monotonic(), Search(self.settings)
        full_search(search, space, self.prepare, self.measure, self.progress)
        return search, time.monotonic() - started

    def quick(self, space: Space, shipped: Knobs) -> tuple[Search, float, int]:
        """As ``tdk tune``: the shipped sweep, its drift probe, then the climb (with the
        number of measurements the sweep and probe took)."""
        started, quick, probe = time.monotonic(), Search(self.settings), Search(self.settings)
        sweep(probe, shipped, self.prepare, self.measure, early_stop=False)
        repeats = probe_drift(probe, self.measure)
        quick.drift = probe.drift
        quick_search(quick, space, shipped, self.prepare, self.measure, self.progress)
        return quick, time.monotonic() - started, len(probe.points) + len(repeats)

    def best_of(self, knobs: Knobs) -> float:
        search = Search(self.settings)
        sweep(search, knobs, self.prepare, self.measure, early_stop=False)
        return _rps(search.best())


def _settings(args: argparse.Namespace) -> Settings:
    _, levels = _space(args.quick)
    steady = Stability(args.stability, args.max_windows)
    return Settings(args.budget_ms, levels, args.duration, stability=steady, placement=args.where)


@contextmanager
def _rig(args: argparse.Namespace, model_dir: Path, work: Path) -> Iterator[tuple[_Rig, Space]]:
    """One local Triton serving ``model_dir``, a generator, and the space tune derives."""
    from infra.clients.inputs import example_inputs
    from infra.perf.tune.server import LocalTriton, PerThreadSender, SenderFactory
    from infra.perf.tune.tuner import model_of, model_space, open_driver

    settings = _settings(args)
    with LocalTriton(model_dir, work / "triton", settings.placement.server) as triton:
        # the model's own config, as tdk tune derives it (base_config is what this Triton
        # serves: an ONNX model through the runtime's Python adapter)
        config = load_config(model_dir / CONFIG_NAME)
        space, _ = model_space(_space(args.quick)[0], config, triton.capabilities)
        model = model_of(triton.base_config)
        arrays = example_inputs(model, 1)
        reach = (triton.url, model, arrays, triton.opener)  # its connector, as tdk tune's
        sender = PerThreadSender(*reach)
        driver = open_driver(SenderFactory(*reach), settings, sender)

        def prepare(knobs: Knobs) -> None:
            sender.close()
            triton.load(apply_knobs(triton.base_config, knobs))

        def measure(knobs: Knobs, concurrency: int) -> Point:
            return measure_point(knobs, concurrency, driver, sender, settings)

        try:
            yield _Rig(settings, prepare, measure), space
        finally:
            driver.close()
            sender.close()


def _measure_all(args: argparse.Namespace, model_dir: Path, work: Path) -> Measured:
    """Full grid, quick climb, then alternating re-measurement of shipped vs tuned."""
    shipped = shipped_knobs(load_config(model_dir / CONFIG_NAME))
    with _rig(args, model_dir, work) as (rig, space):
        full, full_s = rig.full(space)
        quick, quick_s, probe_n = rig.quick(space, shipped)
        best, quick_best = full.best(), quick.best()
        if best is None or quick_best is None:  # report what the searches measured
            failed = [f"searches: nothing met p99 <= {args.budget_ms} ms (raise --budget-ms)"]
            return Measured(full, quick, None, None, {}, [], full_s, quick_s, probe_n, failed)
        rounds: dict[Knobs, list[float]] = {shipped: [], best.knobs: [], quick_best.knobs: []}
        for turn in range(args.rounds):  # shipped, full, quick; then the other way round
            for knobs in list(rounds)[:: 1 if turn % 2 == 0 else -1]:
                rounds[knobs].append(rig.best_of(knobs))
    repeats, failed = _tune_runs(args, model_dir, best.knobs, work)
    return Measured(
        full, quick, best.knobs, quick_best.knobs, rounds, repeats, full_s, quick_s, probe_n,
        failed,
    )  # fmt: skip


def _tune_runs(
    args: argparse.Namespace, model_dir: Path, knobs: Knobs, work: Path
) -> tuple[list[Point], list[str]]:
    """``knobs`` written as the model's config, then ``--tune-runs`` runs of ``tdk tune`` (each
    its own Triton, quick search): the shipped best each run reports, with spread and drift;
    and each run that met no point (the others still count: a later failure discards nothing)."""
    from infra.perf.tune.tuneio import write_tuned
    from infra.perf.tune.tuner import SearchMode, tune_local

    config = load_config(model_dir / CONFIG_NAME)
    tuned = write_tuned(model_dir, apply_knobs(config, knobs), work / "tuned").path
    reported, failed = [], []
    for run in range(args.tune_runs):
        print(f"  tune run {run + 1}/{args.tune_runs} of {knobs.label()}", file=sys.stderr)
        report = tune_local(
            tuned, load_config(tuned / CONFIG_NAME), _settings(args), _space(args.quick)[0],
            SearchMode.quick, lambda *_: None,
        )  # fmt: skip
        if report.signal is not None:  # tune stopped on Ctrl-C / SIGTERM: so does the bench
            raise SystemExit(128 + report.signal)
        if report.shipped_best is None:
            failed.append(f"tune run {run + 1}: the config met no point within the budget")
            continue
        reported.append(report.shipped_best)
    return reported, failed


def _ratios(tops: list[float], bottoms: list[float]) -> list[float]:
    """``top / bottom`` per round (0.0 where the bottom served nothing)."""
    return [top / bottom if bottom else 0.0 for top, bottom in zip(tops, bottoms, strict=True)]


def _repeats(points: list[Point]) -> dict[str, Any]:
    """Five measurements of one config at one concurrency against their reported spreads."""
    median = statistics.median(p.throughput_rps for p in points) if points else 0.0
    within = [abs(p.throughput_rps / median - 1) <= p.noise for p in points] if median else []
    return {
        "repeat_rps": [_rps(p) for p in points],
        "repeat_spreads": [None if math.isinf(p.spread) else round(p.spread, 4) for p in points],
        "repeat_drift": [round(p.drift, 4) for p in points],
        "repeat_noise": [round(p.noise, 4) for p in points],
        "repeat_windows": [p.windows for p in points],
        "repeat_within_spread": sum(within),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tdk-bench-tune-") as tmp:
        work = Path(tmp)
        model_dir = _generate(work)
        shipped = shipped_knobs(load_config(model_dir / CONFIG_NAME))
        m = _measure_all(args, model_dir, work)
    if m.tuned is None or m.quick_choice is None:
        return _searches_only(args, m)
    repeats = _repeats(m.repeats)
    default_rps = statistics.median(m.rounds[shipped])
    tuned_rps = statistics.median(m.rounds[m.tuned])
    quick_best = statistics.median(m.rounds[m.quick_choice])
    full_best = tuned_rps
    # ratios within each round (configs measured back to back share the machine's drift), and
    # their median: what the goals are judged on
    speedups = _ratios(m.rounds[m.tuned], m.rounds[shipped])
    quick_shares = _ratios(m.rounds[m.quick_choice], m.rounds[m.tuned])
    speedup, quick_share = statistics.median(speedups), statistics.median(quick_shares)
    quick_n, full_n = len(m.quick.points) + m.probe_n, len(m.full.points)
    return {
        "model": "ranker (model_repos/generate.py --with ranker), CPU",
        "baseline": "the shipped config.pbtxt, same Triton, same run",
        "latency_budget_ms": args.budget_ms,
        "duration_s": args.duration,
        "cpus": os.cpu_count(),
        **args.where.to_dict(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "shipped_config": shipped.label(),
        "tuned_config": m.tuned.label(),
        "default_rps": default_rps,
        "tuned_rps": tuned_rps,
        "default_rps_rounds": m.rounds[shipped],
        "tuned_rps_rounds": m.rounds[m.tuned],
        "quick_config": m.quick_choice.label(),
        "quick_rps_rounds": m.rounds[m.quick_choice],
        "full_search_best_rps": _rps(m.full.best()),
        "quick_search_best_rps": _rps(m.quick.best()),
        "speedup": round(speedup, 3),
        "speedup_rounds": [round(r, 3) for r in speedups],
        "full_measurements": full_n,
        "quick_measurements": quick_n,
        "full_best_rps": full_best,
        "quick_best_rps": quick_best,
        "quick_vs_full": round(quick_share, 3),
        "quick_vs_full_rounds": [round(r, 3) for r in quick_shares],
        "quick_share_of_measurements": round(quick_n / full_n, 3) if full_n else None,
        "full_s": round(m.full_s, 1),
        "quick_s": round(m.quick_s, 1),
        "quick_drift": round(m.quick.drift, 4),
        "quick_notes": m.quick.notes,
        "quick_duels": [d.to_dict() for d in m.quick.duels],
        "stability_percentage": args.stability,
        "max_windows": args.max_windows,
        "unstable_points": sum(not p.stable for p in [*m.full.points, *m.quick.points]),
        "client_bound_points": sum(p.client_bound for p in [*m.full.points, *m.quick.points]),
        **repeats,
        "failed_steps": m.failed,
        "goals_met": {
            f"{GOAL_RUNS} repeats each within their reported spread": args.tune_runs >= GOAL_RUNS
            and repeats["repeat_within_spread"] == args.tune_runs,
            f"speedup >= {GOAL_SPEEDUP}": speedup >= GOAL_SPEEDUP,
            f"quick_vs_full >= {GOAL_QUICK_SHARE}": quick_share >= GOAL_QUICK_SHARE,
            "quick_measurements <= full_measurements / 3": quick_n <= GOAL_QUICK_COST * full_n,
        },
    }


def _searches_only(args: argparse.Namespace, m: Measured) -> dict[str, Any]:
    """The report when the searches met no point: what they measured, every goal unmet and
    why (``failed_steps``), instead of no report at all."""
    quick_n, full_n = len(m.quick.points) + m.probe_n, len(m.full.points)
    goals = [
        f"{GOAL_RUNS} repeats each within their reported spread",
        f"speedup >= {GOAL_SPEEDUP}",
        f"quick_vs_full >= {GOAL_QUICK_SHARE}",
        "quick_measurements <= full_measurements / 3",
    ]
    return {
        "model": "ranker (model_repos/generate.py --with ranker), CPU",
        "latency_budget_ms": args.budget_ms,
        "duration_s": args.duration,
        "cpus": os.cpu_count(),
        **args.where.to_dict(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "full_measurements": full_n,
        "quick_measurements": quick_n,
        "full_s": round(m.full_s, 1),
        "quick_s": round(m.quick_s, 1),
        "unstable_points": sum(not p.stable for p in [*m.full.points, *m.quick.points]),
        "failed_steps": m.failed,
        "goals_met": dict.fromkeys(goals, False),
    }


def run_repeats(args: argparse.Namespace) -> dict[str, Any]:
    """``--repeats-only``: the quick search's choice, then the five tune runs of it."""
    with tempfile.TemporaryDirectory(prefix="tdk-bench-tune-") as tmp:
        work = Path(tmp)
        model_dir = _generate(work)
        shipped = shipped_knobs(load_config(model_dir / CONFIG_NAME))
        with _rig(args, model_dir, work) as (rig, space):
            quick, quick_s, _ = rig.quick(space, shipped)
        best = quick.best()
        if best is None:
            failed = [f"quick search: nothing met p99 <= {args.budget_ms} ms (raise --budget-ms)"]
            points: list[Point] = []
        else:
            points, failed = _tune_runs(args, model_dir, best.knobs, work)
        repeats = _repeats(points)
    return {
        "model": "ranker (model_repos/generate.py --with ranker), CPU",
        "repeated_config": best.knobs.label() if best else None,
        "duration_s": args.duration,
        "cpus": os.cpu_count(),
        **args.where.to_dict(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "quick_s": round(quick_s, 1),
        **repeats,
        "failed_steps": failed,
        "goals_met": {
            f"{GOAL_RUNS} repeats each within their reported spread": args.tune_runs >= GOAL_RUNS
            and repeats["repeat_within_spread"] == args.tune_runs,
        },
    }


def _number(option: str, most: float, least: float = 0.01) -> Callable[[str], float]:
    """An argparse type: a finite number from ``least`` to ``most`` (``nan``, ``inf`` refused)."""

    def parse(text: str) -> float:
        try:
            return parse_number(text, option, least, most)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    return parse


def _whole(option: str, most: int = 1000) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 to ``most`` in ASCII digits (0 refused)."""

    def parse(text: str) -> int:
        try:
            return int(parse_number(text, option, 1, most, integer=True))
        except UsageError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    return parse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.add_argument("--quick", action="store_true", help="tiny space, short levels (smoke)")
    number, whole = _number, _whole  # argparse types: finite, in range, ASCII digits
    parser.add_argument(
        "--budget-ms", type=number("--budget-ms", 1e6), default=50.0, help="p99 latency budget"
    )
    parser.add_argument(
        "--duration", type=number("--duration", 3600), default=None, help="seconds per window"
    )
    parser.add_argument(
        "--stability", type=number("--stability", 999), default=10.0, help="stable within this %%"
    )
    parser.add_argument(
        "--max-windows", type=whole("--max-windows"), default=None, help="windows per point"
    )
    parser.add_argument("--rounds", type=whole("--rounds"), default=None, help="re-measure rounds")
    parser.add_argument(
        "--tune-runs", type=whole("--tune-runs"), default=None, help="tdk tune runs of the choice"
    )
    parser.add_argument(
        "--repeats-only", action="store_true", help="only the quick choice's five tune runs"
    )
    for side in ("server", "client"):  # tdk tune's options, read by the same code
        parser.add_argument(f"--{side}-cpus", default="auto", help="auto, all or a CPU list")
    args = parser.parse_args()
    if args.duration is None:
        args.duration = 0.1 if args.quick else 0.3
    if args.max_windows is None:
        args.max_windows = 3 if args.quick else 5
    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    if args.tune_runs is None:
        args.tune_runs = 2 if args.quick else GOAL_RUNS
    if args.tune_runs < 1:
        parser.error(f"--tune-runs {args.tune_runs}: expected >= 1")
    try:  # placed as tdk tune places them, resolved once
        args.where = resolve(args.server_cpus, args.client_cpus, local=True)
    except UsageError as exc:
        parser.error(str(exc))
    try:
        with terminations_interrupt():  # SIGTERM stops Triton and removes the work dir too
            report = run_repeats(args) if args.repeats_only else run(args)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: the cleanup ran on the way out
        signum = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
        print(f"bench/tune.py: stopped by signal {signum}", file=sys.stderr)
        return 128 + signum
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:>30}: {value}")
    for step in report["failed_steps"]:  # measured what it could; a step that failed is exit 1
        print(f"bench/tune.py: {step}", file=sys.stderr)
    return 1 if report["failed_steps"] else 0


if __name__ == "__main__":
    sys.exit(main())
