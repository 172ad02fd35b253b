"""``tdk plan --plot``: cost per hour of each candidate over the traffic profile (a PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from infra.perf.charts import pyplot, save

if TYPE_CHECKING:
    from infra.planning.report import PlanReport


#: traffic rows drawn at most; longer profiles are drawn as the maximum of each bucket of rows
MAX_POINTS = 2000


def bucket_max(values: list[float], size: int) -> list[float]:
    """The maximum of each run of ``size`` values (a peak is never smoothed away)."""
    return [max(values[i : i + size]) for i in range(0, len(values), size)]


def cost_plot(report: PlanReport, path: Path) -> Path:
    """Cost per hour of each candidate (and the baseline) over the traffic profile."""
    plt = pyplot()
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
    return save(plt, fig, path)
