"""``tdk tune MODEL_DIR``: find the batching / instance config with the most throughput within a
p99 latency budget, on the local Triton."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from cli.common import JsonOpt
from cli.output import Output
from infra.perf.space import Space
from infra.perf.tune import Settings
from tdk.errors import TdkError, UsageError

if TYPE_CHECKING:
    from infra.perf.tune import Point
    from infra.perf.tuner import TuneReport

EXIT_INTERRUPTED = 130
SPACE, SETTINGS = Space(), Settings(budget_ms=0)  # where the defaults are declared


def _csv(values: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in values)


def _ints(option: str, text: str, minimum: int) -> tuple[int, ...]:
    try:
        values = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        values = ()
    if not values or values[0] < minimum:
        raise UsageError(
            f"{option} {text!r}: expected comma-separated integers >= {minimum}",
            hint=f"e.g. {option} 1,2,4",
        )
    return values


ModelDirArg = Annotated[Path, typer.Argument(help="One model directory (holds config.pbtxt).")]
BudgetOpt = Annotated[
    float, typer.Option("--latency-budget-ms", min=0.001, help="p99 latency the choice must meet.")
]


SearchOpt = Annotated[str, typer.Option("--search", help="quick (hill climb) or full (grid).")]
ConcurrencyOpt = Annotated[
    str | None,
    typer.Option("--concurrency", "-c", help=f"Sweep per config [{_csv(SETTINGS.concurrency)}]."),
]
DurationOpt = Annotated[
    float | None,
    typer.Option("--duration", min=0.05, help=f"Seconds per level [{SETTINGS.duration_s:g}]."),
]
InstancesOpt = Annotated[
    str | None, typer.Option("--instances", help=f"Instance counts [{_csv(SPACE.instances)}].")
]
BatchSizesOpt = Annotated[
    str | None,
    typer.Option("--max-batch-sizes", help=f"Batch sizes [{_csv(SPACE.max_batch_size)}]."),
]
DelaysOpt = Annotated[
    str | None,
    typer.Option("--queue-delays-us", help=f"Queue delays [{_csv(SPACE.max_queue_delay_us)}]."),
]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Write the tuned model to OUT/<model>.")]
WriteOpt = Annotated[bool, typer.Option("--write", help="Rewrite MODEL_DIR's config in place.")]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="PNG: throughput vs p99.")]


def tune(
    model_dir: ModelDirArg,
    latency_budget_ms: BudgetOpt,
    search: SearchOpt = "quick",
    concurrency: ConcurrencyOpt = None,
    duration: DurationOpt = None,
    instances: InstancesOpt = None,
    max_batch_sizes: BatchSizesOpt = None,
    queue_delays: DelaysOpt = None,
    out_dir: OutOpt = None,
    write: WriteOpt = False,
    plot: PlotOpt = None,
    json: JsonOpt = False,
) -> None:
    """Tune max_batch_size, dynamic batching and instance count; Ctrl-C reports the best so far."""
    from infra.perf.tuner import SearchMode, run_tune, write_tuned

    if search not in ("quick", "full"):
        raise UsageError(f"--search {search!r}: expected quick or full", hint="--search quick")
    if write and out_dir is not None:
        raise UsageError("--write and --out both given", hint="choose one")
    out = Output(json_mode=json)
    settings = Settings(latency_budget_ms)  # the defaults live in Settings and Space
    if concurrency is not None:
        settings = replace(settings, concurrency=_ints("--concurrency", concurrency, 1))
    if duration is not None:
        settings = replace(settings, duration_s=duration)
    space = SPACE
    if instances is not None:
        space = replace(space, instances=_ints("--instances", instances, 1))
    if max_batch_sizes is not None:
        space = replace(space, max_batch_size=_ints("--max-batch-sizes", max_batch_sizes, 1))
    if queue_delays is not None:
        space = replace(space, max_queue_delay_us=_ints("--queue-delays-us", queue_delays, 0))

    def progress(done: int, total: int, best: Point | None) -> None:
        shown = f"{best.throughput_rps:.1f} rps ({escape(best.knobs.label())})" if best else "-"
        elapsed = time.monotonic() - started
        out.err.print(f"tune: {done}/{total} configs, {elapsed:.1f} s, best {shown}")

    started = time.monotonic()
    report = run_tune(model_dir, settings, space, SearchMode(search), progress)
    written = None
    choice = report.choice
    if choice is not None and not report.search.interrupted and (write or out_dir is not None):
        written = write_tuned(model_dir, choice.knobs, None if write else out_dir)
    if plot is not None:
        from infra.perf.plot import tune_plot

        tune_plot(report, plot)
    _show(out, report, json, written.diff if written else None, plot)
    if report.search.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if choice is None:
        raise TdkError(
            f"no configuration met p99 <= {latency_budget_ms:g} ms; nothing was written",
            hint="raise --latency-budget-ms or try lower concurrency (-c 1,2)",
        )


def _show(out: Output, report: TuneReport, json: bool, diff: str | None, plot: Path | None) -> None:
    data = report.to_dict()
    if json:
        data["diff"] = diff
        data["plot"] = str(plot) if plot else None
        out.json(data)
        return
    if report.search.interrupted:
        out.warn("interrupted: reporting the best configuration measured so far")
    columns = ["config", "conc.", "rps", "p50 ms", "p99 ms", ""]
    front = report.front
    rows = [
        (
            escape(p.knobs.label()),
            p.concurrency,
            f"{p.throughput_rps:.1f}",
            f"{p.p50_ms:.2f}",
            f"{p.p99_ms:.2f}",
            "",
        )
        for p in front
    ]
    title = f"tdk tune {report.model}: Pareto front ({report.measurements} measurements)"
    out.table(title, columns, [_mark(row, report) for row in rows])
    _summary(out, report)
    if diff:
        out.console.print(escape(diff), highlight=False)
    if plot is not None:
        out.info(f"plot: {plot}")


def _mark(row: tuple[object, ...], report: TuneReport) -> tuple[object, ...]:
    choice = report.choice
    if choice and row[0] == escape(choice.knobs.label()) and row[1] == choice.concurrency:
        return (*row[:-1], "choice")
    return row


def _summary(out: Output, report: TuneReport) -> None:
    budget = report.settings.budget_ms
    shipped, choice = report.shipped_best, report.choice
    if shipped is not None:
        out.info(f"shipped config: {shipped.throughput_rps:.1f} rps within p99 {budget:g} ms")
    else:
        out.info(f"shipped config: nothing within p99 {budget:g} ms")
    if choice is None:
        return
    ratio = (
        f" ({choice.throughput_rps / shipped.throughput_rps:.2f}x shipped)"
        if shipped and shipped.throughput_rps
        else ""
    )
    out.info(
        f"best: {escape(choice.knobs.label())} at concurrency {choice.concurrency}: "
        f"{choice.throughput_rps:.1f} rps, p99 {choice.p99_ms:.2f} ms{ratio}"
    )
