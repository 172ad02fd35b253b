"""``tdk tune MODEL_DIR``: find the batching / instance config with the most throughput within a
p99 latency budget, on the local Triton."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from cli.common import MAX_SECONDS, JsonOpt, SamplesOpt, number
from cli.output import Output, stability
from infra.perf.tune.request import TuneRequest
from infra.perf.tune.search import Settings
from infra.perf.tune.space import Space
from packager.config import CONFIG_NAME, load_config
from tdk.errors import TdkError, UsageError

if TYPE_CHECKING:
    from infra.perf.tune.search import Point, Progress
    from infra.perf.tune.tuner import SearchMode, TuneReport

EXIT_INTERRUPTED = 130
MAX_REPEATS = 20  # each repeat is one more point: a bound on what a typo can cost
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
    if request.restore:
        _restore(request.url, request.model, request.json)
        return
    _run(request)


def _settings_and_space(request: TuneRequest) -> tuple[Settings, Space]:
    """The options turned into what the search measures, each checked (a usage error names it)."""
    from infra.perf.bench.placement import resolve

    r = request
    settings, space = _options(r.latency_budget_ms, r.search, r.concurrency, r.duration)
    settings = _measuring(settings, r.stability, r.max_windows, r.processes)
    settings = _repeating(settings, r.repeats, r.pairs)
    placement = resolve(r.server_cpus, r.client_cpus, local=r.url is None)
    settings = replace(settings, placement=placement, inputs=r.inputs, samples=r.samples)
    space = _space(space, r.instances, r.max_batch_sizes, r.queue_delays)
    return settings, _accelerators(space, r.accelerators)


def _accelerators(space: Space, accelerators: str) -> Space:
    if accelerators == "auto":
        return space
    from infra.perf.tune.accel import is_option

    chosen = [a.strip() for a in accelerators.split(",") if a.strip() not in ("", "none")]
    for option in chosen:
        if not is_option(option):
            raise UsageError(
                f"--accelerators: unknown option {option!r}",
                hint="auto, none, or some of trt-fp16,trt-fp32,openvino,threads-N",
            )
    return replace(space, accelerators=("", *chosen), auto_accelerators=False)


def _check_paths(request: TuneRequest, settings: Settings) -> Any:
    """Every input and output checked before anything is measured; the model's config."""
    from infra.perf.tune.tuneio import check_out, check_write, read_model

    model_dir, out_dir, write = request.model_dir, request.out_dir, request.write
    if write and out_dir is not None:
        raise UsageError("--write and --out both given", hint="choose one")
    if model_dir is None and (request.url is None or request.model is None):
        raise UsageError(
            "give MODEL_DIR, or --url with --model", hint="e.g. tdk tune --url URL --model bert"
        )
    if model_dir is None and (write or out_dir is not None):
        raise UsageError("--write and --out need MODEL_DIR", hint="give the model's directory")
    config = read_model(model_dir) if model_dir is not None else None
    if out_dir is not None and model_dir is not None:
        check_out(model_dir, out_dir)
    if write and model_dir is not None:
        check_write(model_dir)
    if config is not None:
        _check_inputs(config, settings)
    return config


def _run(request: TuneRequest) -> None:
    from infra.perf.tune.tuner import SearchMode, tune_local, tune_remote

    settings, space = _settings_and_space(request)
    config = _check_paths(request, settings)
    out = Output(json_mode=request.json)
    mode = SearchMode(request.search)
    progress = _progress(out, mode, time.monotonic())
    out.err.print(_plan(mode is SearchMode.full, settings))
    if request.url is not None:
        name = request.model or str(config.name if config is not None else "")
        report = tune_remote(
            request.url, name, settings, space, mode, progress, request.metrics_url
        )
    else:
        assert request.model_dir is not None and config is not None
        report = tune_local(request.model_dir, config, settings, space, mode, progress)
    _finish(out, request, report)


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


def _finish(out: Output, request: TuneRequest, report: TuneReport) -> None:
    """Write the choice where asked, draw the plot, show the report, and exit as it ended."""
    from infra.perf.tune.tuneio import write_tuned

    model_dir, out_dir, write, plot = (
        request.model_dir,
        request.out_dir,
        request.write,
        request.plot,
    )
    written = None
    choice = report.choice
    wanted = (write or out_dir is not None) and not report.search.interrupted
    if wanted and report.improves and choice is not None and model_dir is not None:
        from infra.perf.tune.space import apply_knobs

        tuned = apply_knobs(load_config(model_dir / CONFIG_NAME), choice.knobs)
        written = write_tuned(model_dir, tuned, None if write else out_dir)
    if plot is not None:
        from infra.perf.tune.plot import tune_plot

        tune_plot(report, plot)
    _show(out, report, request.json, written.diff if written else None, plot)
    if report.signal is not None:
        raise typer.Exit(128 + report.signal)
    if choice is None:
        raise TdkError(
            f"no configuration met p99 <= {request.latency_budget_ms:g} ms; nothing was written",
            hint="raise --latency-budget-ms or try lower concurrency (-c 1,2)",
        )


def _options(
    budget: float | None, search: str, concurrency: str | None, duration: float | None
) -> tuple[Settings, Space]:
    if budget is None:
        raise UsageError("--latency-budget-ms is required", hint="e.g. --latency-budget-ms 50")
    if not 0 < budget < float("inf"):
        raise UsageError(f"--latency-budget-ms {budget:g}: expected a number > 0", hint="e.g. 50")
    if search not in ("quick", "full"):
        raise UsageError(f"--search {search!r}: expected quick or full", hint="--search quick")
    settings = Settings(budget)  # the defaults live in Settings and Space
    if concurrency is not None:
        settings = replace(settings, concurrency=_ints("--concurrency", concurrency, 1))
    if duration is not None:
        settings = replace(settings, duration_s=duration)
    return settings, SPACE


def _check_inputs(config: object, settings: Settings) -> None:
    """Every ``--input`` and sample names an input of the model and parses, before anything
    starts."""
    from infra.perf.tune.tuner import model_of, requests_for

    requests_for(model_of(config), settings)


def _restore(url: str | None, model: str | None, json: bool) -> None:
    from infra.perf.tune.tuner import restore_remote

    if url is None or model is None:
        raise UsageError("--restore needs --url and --model", hint="the server and model tuned")
    restore_remote(url, model)
    out = Output(json_mode=json)
    if json:
        out.json({"restored": model, "url": url})
    else:
        out.info(f"restored {model} on {url} to its config from before the tune")


def _measuring(
    settings: Settings, stability: float | None, windows: int | None, processes: int | None
) -> Settings:
    if stability is not None:
        settings = replace(settings, stability=replace(settings.stability, percentage=stability))
    if windows is not None:
        settings = replace(settings, stability=replace(settings.stability, max_windows=windows))
    settings.stability.check()
    if processes is not None:
        if processes < 1:
            raise UsageError(f"--processes {processes}: expected >= 1", hint="e.g. --processes 4")
        settings = replace(settings, processes=processes)
    return settings


def _repeating(settings: Settings, repeats: int | None, pairs: int | None) -> Settings:
    for option, value in (("--repeats", repeats), ("--pairs", pairs)):
        if value is not None and not 0 <= value <= MAX_REPEATS:
            raise UsageError(
                f"{option} {value}: expected 0 to {MAX_REPEATS}", hint=f"e.g. {option} 3"
            )
    if repeats is not None:
        settings = replace(settings, repeats=repeats)
    return settings if pairs is None else replace(settings, pairs=pairs)


def _plan(full: bool, settings: Settings) -> str:
    """What the search will measure, said before it starts."""
    what = (
        "full: every config of the grid"
        if full
        else "quick: a hill climb from the shipped config, measuring only the configs it visits"
    )
    levels = ",".join(str(c) for c in settings.concurrency)
    return (
        f"tune: {what}; each at concurrency {levels}, in {settings.duration_s:g} s windows until "
        f"the last 3 agree within {settings.stability.percentage:g}% "
        f"(at most {settings.stability.max_windows}), {settings.processes} generator process(es); "
        f"the shipped best measured {settings.repeats} more time(s) to learn the drift; a gain "
        f"inside the noise settled by {settings.pairs} back-to-back pair(s); "
        f"{settings.placement.label()}"
    )


def _space(
    space: Space, instances: str | None, max_batch_sizes: str | None, queue_delays: str | None
) -> Space:
    if instances is not None:
        space = replace(space, instances=_ints("--instances", instances, 1))
    if max_batch_sizes is not None:
        space = replace(space, max_batch_size=_ints("--max-batch-sizes", max_batch_sizes, 1))
    if queue_delays is not None:
        delays = _ints("--queue-delays-us", queue_delays, 0)
        space = replace(space, max_queue_delay_us=delays, shipped_delay=False)
    return space


def _show(out: Output, report: TuneReport, json: bool, diff: str | None, plot: Path | None) -> None:
    data = report.to_dict()
    if json:
        data["diff"] = diff
        data["plot"] = str(plot) if plot else None
        out.json(data)
        return
    if report.search.interrupted:
        out.warn("interrupted: reporting the best configuration measured so far")
    front = report.front
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
            "-",
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


def _spread(point: Point) -> str:
    return stability(point.spread, point.windows, point.stable)


def _mark(row: tuple[object, ...], report: TuneReport) -> tuple[object, ...]:
    choice = report.choice
    if choice and row[0] == escape(choice.knobs.label()) and row[1] == choice.concurrency:
        return (*row[:-1], "chosen")
    return row


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
