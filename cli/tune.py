"""``tdk tune MODEL_DIR``: find the batching / instance config with the most throughput within a
p99 latency budget, on the local Triton."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from cli.groups import grouped
from cli.output import Output, stability
from cli.tune_options import MeasureOptions, SearchOptions, TunedOptions, WrittenOptions, request
from infra.perf.tune import session
from infra.perf.tune.request import TuneRequest
from tdk.errors import TdkError

if TYPE_CHECKING:
    from infra.perf.tune.search import Point, Progress
    from infra.perf.tune.tuner import SearchMode, TuneReport

EXIT_INTERRUPTED = 130


@grouped
def tune(
    search: SearchOptions,
    tuned: TunedOptions,
    measure: MeasureOptions,
    written: WrittenOptions,
) -> None:
    """Tune max_batch_size, dynamic batching, instances and accelerators; Ctrl-C reports the best
    so far. The shipped config is kept unless a candidate beats it."""
    asked = request(tuned, search, measure, written)
    out = Output(json_mode=asked.json)
    if asked.restore:
        session.restore(asked)
        _restored(out, asked)
        return
    prepared = session.prepare(asked)
    out.err.print(prepared.describe())
    with out.library_warnings():  # e.g. tune's Triton refused a namespace: what it exposes
        report = session.run(prepared, _progress(out, prepared.mode, time.monotonic()))
    kept = session.keep(prepared, report)
    _show(out, report, asked.json, kept.diff if kept else None, asked.plot)
    if report.signal is not None:
        raise typer.Exit(128 + report.signal)
    if report.choice is None:
        raise TdkError(
            f"no configuration met p99 <= {asked.latency_budget_ms:g} ms; nothing was written",
            hint="raise --latency-budget-ms or try lower concurrency (-c 1,2)",
        )


def _restored(out: Output, request: TuneRequest) -> None:
    if request.json:
        out.json({"restored": request.model, "url": request.url})
    else:
        out.info(f"restored {request.model} on {request.url} to its config from before the tune")


def _progress(out: Output, mode: SearchMode, started: float) -> Progress:
    from infra.perf.tune.tuner import SearchMode

    def progress(done: int, total: int, best: Point | None) -> None:
        shown = f"{best.throughput_rps:.1f} rps ({escape(best.knobs.label())})" if best else "-"
        elapsed = time.monotonic() - started
        count = (
            f"{done}/{total} configs"
            if mode is SearchMode.full
            else f"{done} configs measured (hill climb over a {total}-config grid)"
        )
        out.err.print(f"tune: {count}, {elapsed:.1f} s, best {shown}")

    return progress


def _show(out: Output, report: TuneReport, json: bool, diff: str | None, plot: Path | None) -> None:
    data = report.to_dict()
    if json:
        data["diff"] = diff
        data["plot"] = str(plot) if plot else None
        out.json(data)
        return
    if report.search.interrupted:
        out.warn("interrupted: reporting the best configuration measured so far")
    front, report_choice = _with_choice(report)
    bound = any(p.client_bound for p in front)
    columns = ["config", "conc.", "rps", "stability", "p50 ms", "p99 ms"]
    columns += ["client"] if bound else []  # no column that is empty on every row
    columns.append("choice")
    rows = [
        (
            escape(p.knobs.label()),
            p.concurrency,
            f"{p.throughput_rps:.1f}",
            _spread(p),
            f"{p.p50_ms:.2f}",
            f"{p.p99_ms:.2f}",
            *(["bound" if p.client_bound else "-"] if bound else []),
            "chosen" if p is report_choice else "-",
        )
        for p in front
    ]
    measured = len(report.shipped_points) + report.measurements
    title = f"tdk tune {report.model}: Pareto front of {measured} measurements"
    out.table(title, columns, rows)
    _summary(out, report)
    if diff:
        out.console.print(escape(diff), highlight=False)
    if plot is not None:
        out.info(f"plot: {plot}")


def _spread(point: Point) -> str:
    return stability(point.spread, point.windows, point.stable)


def _with_choice(report: TuneReport) -> tuple[list[Point], Point | None]:
    """The front's points with the chosen one as ``best:`` states it: in place of the front's
    measurement of the same config and concurrency (a duel or re-measurement may differ from
    it), or added when the front lacks it."""
    front, choice = list(report.front), report.choice
    if choice is None or any(p is choice for p in front):
        return front, choice
    same = [
        i for i, p in enumerate(front)
        if p.knobs.canonical() == choice.knobs.canonical() and p.concurrency == choice.concurrency
    ]  # fmt: skip
    if same:
        front[same[0]] = choice
    else:
        front.append(choice)
    return front, choice


def _summary(out: Output, report: TuneReport) -> None:
    budget = report.settings.budget_ms
    shipped, choice = report.shipped_best, report.choice
    if shipped is not None:
        out.info(f"shipped config: {shipped.throughput_rps:.1f} rps within p99 {budget:g} ms")
    else:
        out.info(f"shipped config: nothing within p99 {budget:g} ms")
    for skipped in report.skipped:
        out.info(f"skipped {skipped.option}: {escape(skipped.reason)}")
    for note in report.notes:
        out.info(f"note: {escape(note)}")
    if any(p.client_bound for p in report.front):
        out.warn(
            "the load generator was the limit at some points (client bound): "
            "raise --processes or run it on a bigger machine"
        )
    if choice is None:
        return
    if not report.improves:
        out.info("no candidate beat the shipped config: it stays (nothing was written)")
    ratio = (
        f" ({choice.throughput_rps / shipped.throughput_rps:.2f}x shipped)"
        if shipped and shipped.throughput_rps
        else ""
    )
    out.info(
        f"best: {escape(choice.knobs.label())} at concurrency {choice.concurrency}: "
        f"{choice.throughput_rps:.1f} rps, p99 {choice.p99_ms:.2f} ms{ratio}"
    )
