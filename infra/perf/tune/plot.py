"""``tdk tune --plot``: throughput vs p99 of every configuration's sweep (a PNG)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.perf.charts import pyplot, save

if TYPE_CHECKING:
    from infra.perf.tune.search import Point
    from infra.perf.tune.space import Knobs
    from infra.perf.tune.tuner import TuneReport


def tune_plot(report: TuneReport, path: Path) -> Path:
    """Throughput vs p99 for every configuration's sweep; Pareto front, budget and choice marked."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(13, 6.5), dpi=120)
    sweeps: dict[Knobs, list[Point]] = defaultdict(list)
    for point in report.search.points:
        if point.errors == 0 and point.ok():
            sweeps[point.knobs].append(point)
    for points in sweeps.values():
        _sweep(ax, points, "o-", color="0.75", markersize=3, linewidth=0.8, zorder=1)
    front = report.front
    ax.step(
        [p.p99_ms for p in front],
        [p.throughput_rps for p in front],
        where="post",
        color="tab:blue",
        linewidth=2,
        marker="o",
        markersize=6,
        label="Pareto front",
        zorder=2,
    )
    ax.plot([], [], "o-", color="0.75", markersize=3, label="one configuration's sweep")
    _sweep(ax, report.shipped_points, "s--", color="tab:orange", markersize=4, linewidth=1,
           label="shipped config's sweep", zorder=2)  # fmt: skip
    ax.axvline(report.settings.budget_ms, color="tab:red", linestyle="--", label="p99 budget")
    shipped, choice = report.shipped_best, report.choice
    if shipped is not None:
        # the median of every measurement of that point (it may sit off the sweep's line)
        said = f"shipped: {shipped.throughput_rps:.0f} rps, median at c={shipped.concurrency}"
        _mark(ax, shipped, "s", "tab:orange", said)
    if choice is not None:
        _mark(ax, choice, "*", "tab:red", f"choice: {choice.knobs.label()}, c={choice.concurrency}")
    ax.set_xscale("log")
    ax.set_xlabel("p99 latency (ms, log scale)")
    ax.set_ylabel("throughput (inferences/s)")
    ax.set_title(
        f"tdk tune {report.model}: {report.mode.value} search, "
        f"{report.measurements} measurements, budget {report.settings.budget_ms:g} ms"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, borderaxespad=0)
    return save(plt, fig, path)


def _sweep(ax: Any, points: list[Point], style: str, **line: Any) -> None:
    """One configuration's sweep, in concurrency order: p99 against throughput."""
    ordered = sorted(points, key=lambda p: p.concurrency)
    ax.plot([p.p99_ms for p in ordered], [p.throughput_rps for p in ordered], style, **line)


def _mark(ax: Any, point: Point, marker: str, color: str, label: str) -> None:
    ax.scatter(
        [point.p99_ms],
        [point.throughput_rps],
        marker=marker,
        s=220,
        color=color,
        edgecolors="black",
        zorder=3,
        label=label,
    )
