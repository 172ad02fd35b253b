"""PNG charts for tune and plan (matplotlib, Agg backend, imported only when a plot is asked)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from infra.perf.space import Knobs
    from infra.perf.tune import Point
    from infra.perf.tuner import TuneReport
    from infra.planning.report import PlanReport


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def tune_plot(report: TuneReport, path: Path) -> Path:
    """Throughput vs p99 for every configuration's sweep; Pareto front, budget and choice marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(13, 6.5), dpi=120)
    sweeps: dict[Knobs, list[Point]] = defaultdict(list)
    for point in report.search.points:
        if point.errors == 0 and point.ok():
            sweeps[point.knobs].append(point)
    for points in sweeps.values():
        points.sort(key=lambda p: p.concurrency)
        ax.plot(
            [p.p99_ms for p in points],
            [p.throughput_rps for p in points],
            "o-",
            color="0.75",
            markersize=3,
            linewidth=0.8,
            zorder=1,
        )
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
    shipped_sweep = sorted(report.shipped_points, key=lambda p: p.concurrency)
    ax.plot(
        [p.p99_ms for p in shipped_sweep],
        [p.throughput_rps for p in shipped_sweep],
        "s--",
        color="tab:orange",
        markersize=4,
        linewidth=1,
        label="shipped config's sweep",
        zorder=2,
    )
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
    return _save(plt, fig, path)


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


#: traffic rows drawn at most; longer profiles are drawn as the maximum of each bucket of rows
MAX_POINTS = 2000


def bucket_max(values: list[float], size: int) -> list[float]:
    """The maximum of each run of ``size`` values (a peak is never smoothed away)."""
    return [max(values[i : i + size]) for i in range(0, len(values), size)]


def cost_plot(report: PlanReport, path: Path) -> Path:
    """Cost per hour of each candidate (and the baseline) over the traffic profile."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 6), dpi=120)
    size = -(-len(report.traffic) // MAX_POINTS)
    times = [sample.time for sample in report.traffic][::size]
    edges = range(len(times) + 1)  # each row lasts one interval: draw its last one too

    def held(values: list[float]) -> list[float]:
        values = bucket_max(values, size)
        return [*values, values[-1]]

    for option in report.options:
        style = "--" if option.baseline else "-"
        ax.step(
            edges,
            held([float(c) for c in option.cost_per_hour_series]),
            where="post",
            linestyle=style,
            linewidth=2,
            label=f"{option.name} (avg ${option.average_cost_per_hour:.2f}/h)",
        )
    rps = ax.twinx()
    rps.fill_between(
        edges,
        held([float(s.rps) for s in report.traffic]),
        step="post",
        color="0.85",
        alpha=0.5,
    )
    rps.set_ylabel("traffic (inferences/s, grey)")
    rps.set_ylim(bottom=0)
    ax.set_zorder(rps.get_zorder() + 1)
    ax.patch.set_visible(False)
    step = max(1, len(times) // 12)
    ax.set_xticks(range(0, len(times), step))
    ax.set_xticklabels(times[::step], rotation=30, ha="right", fontsize=8)
    ax.set_xlabel("time (from the traffic file)")
    ax.set_ylabel("USD per hour")
    ax.set_ylim(bottom=0)
    ax.set_title(
        f"tdk plan: cost per hour over the traffic profile (prices of {report.price_date})"
    )
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    from tdk.errors import UsageError

    try:
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    except OSError as exc:
        raise UsageError(
            f"--plot {path}: cannot write it ({exc.strerror or exc})",
            hint="choose a writable path ending in .png",
        ) from None
    except ValueError as exc:  # an unknown image format
        raise UsageError(f"--plot {path}: {exc}", hint="name a .png file") from None
    finally:
        plt.close(fig)
    return path
