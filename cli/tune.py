"""``tdk tune MODEL_DIR``: find the batching / instance config with the most throughput within a
p99 latency budget, on the local Triton."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from cli.common import MAX_SECONDS, JsonOpt, SamplesOpt, number
from cli.output import Output, stability
from infra.perf.tune import session
from infra.perf.tune.request import SETTINGS, SPACE, TuneRequest
from tdk.errors import TdkError

if TYPE_CHECKING:
    from infra.perf.tune.search import Point, Progress
    from infra.perf.tune.tuner import SearchMode, TuneReport

EXIT_INTERRUPTED = 130


def _csv(values: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in values)


ModelDirArg = Annotated[
    Path | None, typer.Argument(help="One model directory (holds config.pbtxt).")
]
BudgetOpt = Annotated[
    float | None,
    typer.Option(
        "--latency-budget-ms",
        parser=number("--latency-budget-ms", 0, 1e6, above=True),
        metavar="FLOAT",
        help="p99 latency the choice must meet (required).",
    ),
]


SearchOpt = Annotated[
    str,
    typer.Option(
        "--search",
        metavar="[quick|full]",  # infra.perf.tune.tuner.SearchMode (a test keeps them equal)
        help="quick (hill climb) or full (grid).",
    ),
]
_INTS = "INTEGER,..."  # the metavar of a comma-separated list of numbers
ConcurrencyOpt = Annotated[
    str | None,
    typer.Option(
        "--concurrency",
        "-c",
        metavar=_INTS,
        help=f"Sweep per config [{_csv(SETTINGS.concurrency)}].",
    ),
]
DurationOpt = Annotated[
    float | None,
    typer.Option(
        "--duration",
        parser=number("--duration", 0.05, MAX_SECONDS),
        metavar="SECONDS",
        help=f"Seconds per level [{SETTINGS.duration_s:g}].",
    ),
]
InstancesOpt = Annotated[
    str | None,
    typer.Option("--instances", metavar=_INTS, help=f"Instance counts [{_csv(SPACE.instances)}]."),
]
BatchSizesOpt = Annotated[
    str | None,
    typer.Option(
        "--max-batch-sizes", metavar=_INTS, help=f"Batch sizes [{_csv(SPACE.max_batch_size)}]."
    ),
]
DelaysOpt = Annotated[
    str | None,
    typer.Option(
        "--queue-delays-us", metavar=_INTS, help=f"Queue delays [{_csv(SPACE.max_queue_delay_us)}]."
    ),
]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Write the tuned model to OUT/<model>.")]
WriteOpt = Annotated[bool, typer.Option("--write", help="Rewrite MODEL_DIR's config in place.")]
AccelOpt = Annotated[
    str,
    typer.Option(
        "--accelerators",
        help="auto (what the model and server offer), none, or a list: trt-fp16,threads-2,...",
    ),
]
UrlOpt = Annotated[
    str | None,
    typer.Option("--url", help="Tune on this Triton (explicit model control) instead of locally."),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="With --url: the model's name on that server.")
]
MetricsUrlOpt = Annotated[
    str | None,
    typer.Option("--metrics-url", help="With --url: Triton's metrics (nv_gpu_* shows a GPU)."),
]
StabilityOpt = Annotated[
    float | None,
    typer.Option(
        "--stability",
        parser=number("--stability", 0, 999, above=True),
        metavar="PERCENT",
        help=f"A point is stable when its last 3 windows agree within this % "
        f"[{SETTINGS.stability.percentage:g}].",
    ),
]
MaxWindowsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-windows",
        parser=number("--max-windows", 1, 1000, integer=True),
        metavar="INTEGER",
        help=f"Windows per point at most [{SETTINGS.stability.max_windows}].",
    ),
]
ProcessesOpt = Annotated[
    int | None,
    typer.Option(
        "--processes",
        parser=number("--processes", 1, 1024, integer=True),
        metavar="INTEGER",
        help=f"Load-generator processes [{SETTINGS.processes}].",
    ),
]
RepeatsOpt = Annotated[
    int | None,
    typer.Option(
        "--repeats",
        help="Measure the shipped config's best point again this many times: how much it "
        "varies (drift) is the least gain a candidate must show; 0 skips "
        f"[{SETTINGS.repeats}].",
    ),
]
PairsOpt = Annotated[
    int | None,
    typer.Option(
        "--pairs",
        help="A gain inside the noise is settled by measuring both configs back to back this "
        f"many times (the candidate must win each pair); 0 keeps the incumbent [{SETTINGS.pairs}].",
    ),
]
ServerCpusOpt = Annotated[
    str,
    typer.Option(
        "--server-cpus",
        metavar="[auto|all|LIST]",
        help="CPUs for the local Triton and its stubs: auto (all but the generator's), all "
        "(unpinned) or a list such as 0-2.",
    ),
]
ClientCpusOpt = Annotated[
    str,
    typer.Option(
        "--client-cpus",
        metavar="[auto|all|LIST]",
        help="CPUs for the load generator: auto (locally a quarter of them, at least one, apart "
        "from the server's; with --url all), all (unpinned) or a list such as 3.",
    ),
]
RestoreOpt = Annotated[
    bool,
    typer.Option(
        "--restore",
        help="With --url/--model: put back the config a killed tune recorded, then stop.",
    ),
]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="PNG: throughput vs p99.")]
TuneInputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--input",
        "-i",
        help="NAME=@file.npy or NAME='<json>': this tensor replaces its example value in every "
        "request (repeatable).",
    ),
]


def tune(
    model_dir: ModelDirArg = None,
    latency_budget_ms: BudgetOpt = None,
    search: SearchOpt = "quick",
    concurrency: ConcurrencyOpt = None,
    duration: DurationOpt = None,
    instances: InstancesOpt = None,
    max_batch_sizes: BatchSizesOpt = None,
    queue_delays: DelaysOpt = None,
    out_dir: OutOpt = None,
    write: WriteOpt = False,
    accelerators: AccelOpt = "auto",
    url: UrlOpt = None,
    model: ModelOpt = None,
    metrics_url: MetricsUrlOpt = None,
    plot: PlotOpt = None,
    stability: StabilityOpt = None,
    max_windows: MaxWindowsOpt = None,
    processes: ProcessesOpt = None,
    repeats: RepeatsOpt = None,
    pairs: PairsOpt = None,
    server_cpus: ServerCpusOpt = "auto",
    client_cpus: ClientCpusOpt = "auto",
    restore: RestoreOpt = False,
    inputs: TuneInputOpt = None,
    samples: SamplesOpt = None,
    json: JsonOpt = False,
) -> None:
    """Tune max_batch_size, dynamic batching, instances and accelerators; Ctrl-C reports the best
    so far. The shipped config is kept unless a candidate beats it."""
    options = dict(locals())  # the request is the options, by name (TuneRequest's fields)
    request = TuneRequest(**{**options, "inputs": tuple(inputs or ())})
    out = Output(json_mode=request.json)
    if request.restore:
        session.restore(request)
        _restored(out, request)
        return
    prepared = session.prepare(request)
    out.err.print(prepared.describe())
    with out.library_warnings():  # e.g. tune's Triton refused a namespace: what it exposes
        report = session.run(prepared, _progress(out, prepared.mode, time.monotonic()))
    written = session.keep(prepared, report)
    _show(out, report, request.json, written.diff if written else None, request.plot)
    if report.signal is not None:
        raise typer.Exit(128 + report.signal)
    if report.choice is None:
        raise TdkError(
            f"no configuration met p99 <= {request.latency_budget_ms:g} ms; nothing was written",
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
