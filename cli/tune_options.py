"""``tdk tune``'s options, in four groups (``cli.groups``): what is tuned and where, the search,
how each point is measured, and what is written; ``request`` builds the library's
``TuneRequest`` from them, field by field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from cli.common import MAX_SECONDS, JsonOpt, SamplesOpt, number
from cli.groups import option_group
from infra.perf.tune.request import SETTINGS, SPACE, TuneRequest


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
HeaderFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--header-file",
        help="With --url: `Name: value` lines sent with each call to the server, such as the key "
        "of its --http-restricted-api (a file only you can read: never on a command line).",
    ),
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


@option_group
@dataclass(frozen=True)
class TunedOptions:
    """What is tuned and where: a model directory on the local Triton, or a model on a running
    Triton (``--url``/``--model``), whose config ``--restore`` puts back."""

    model_dir: ModelDirArg = None
    url: UrlOpt = None
    model: ModelOpt = None
    metrics_url: MetricsUrlOpt = None
    header_file: HeaderFileOpt = None
    restore: RestoreOpt = False


@option_group
@dataclass(frozen=True)
class SearchOptions:
    """The search: the latency budget, the strategy and the space of configs."""

    latency_budget_ms: BudgetOpt = None
    search: SearchOpt = "quick"
    concurrency: ConcurrencyOpt = None
    duration: DurationOpt = None
    instances: InstancesOpt = None
    max_batch_sizes: BatchSizesOpt = None
    queue_delays: DelaysOpt = None
    accelerators: AccelOpt = "auto"


@option_group
@dataclass(frozen=True)
class MeasureOptions:
    """How each point is measured: stability, drift and duels, CPUs, and the requests sent."""

    stability: StabilityOpt = None
    max_windows: MaxWindowsOpt = None
    processes: ProcessesOpt = None
    repeats: RepeatsOpt = None
    pairs: PairsOpt = None
    server_cpus: ServerCpusOpt = "auto"
    client_cpus: ClientCpusOpt = "auto"
    inputs: TuneInputOpt = None
    samples: SamplesOpt = None


@option_group
@dataclass(frozen=True)
class WrittenOptions:
    """What the tune writes: the tuned model (``--out``, or ``--write`` in place), a plot, and
    the report as JSON."""

    out_dir: OutOpt = None
    write: WriteOpt = False
    plot: PlotOpt = None
    json: JsonOpt = False


def request(
    tuned: TunedOptions, search: SearchOptions, measure: MeasureOptions, written: WrittenOptions
) -> TuneRequest:
    """The library's request, each field from its option."""
    return TuneRequest(
        model_dir=tuned.model_dir,
        latency_budget_ms=search.latency_budget_ms,
        search=search.search,
        concurrency=search.concurrency,
        duration=search.duration,
        instances=search.instances,
        max_batch_sizes=search.max_batch_sizes,
        queue_delays=search.queue_delays,
        out_dir=written.out_dir,
        write=written.write,
        accelerators=search.accelerators,
        url=tuned.url,
        model=tuned.model,
        metrics_url=tuned.metrics_url,
        header_file=tuned.header_file,
        plot=written.plot,
        stability=measure.stability,
        max_windows=measure.max_windows,
        processes=measure.processes,
        repeats=measure.repeats,
        pairs=measure.pairs,
        server_cpus=measure.server_cpus,
        client_cpus=measure.client_cpus,
        restore=tuned.restore,
        inputs=tuple(measure.inputs or ()),
        samples=measure.samples,
        json=written.json,
    )
