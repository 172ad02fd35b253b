"""``tdk bench``: load any target: a closed-loop concurrency sweep or an open-loop request rate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from cli.common import (
    DEFAULT_TIMEOUT,
    MAX_SECONDS,
    GrpcOpt,
    InputOpt,
    JsonBodyOpt,
    JsonOpt,
    SamplesOpt,
    TargetModelOpt,
    TextOpt,
    TimeoutOpt,
    number,
)
from cli.genbench import GenerationOptions, bench_generate
from cli.groups import grouped, option_group
from cli.invoke import ExampleOpt, no_decoupled
from cli.locate import DeploymentOptions
from cli.output import Output, stability
from infra.clients.deadline import check_timeout
from infra.perf.bench import session
from infra.perf.bench.drive import DEFAULT_PROCESSES
from infra.perf.bench.request import (
    DEFAULT_LEVELS,
    LOAD,
    Arrival,
    BenchRequest,
    LoadRequest,
    tensor_load,
)
from tdk.errors import TdkError

if TYPE_CHECKING:
    from infra.perf.bench.genrequest import GenRequest
    from infra.targets.deployment import Deployment

ConcurrencyOpt = Annotated[
    str | None,
    typer.Option(
        "--concurrency",
        "-c",
        metavar="INTEGER,...",
        help=f"Closed loop: comma-separated client counts [{DEFAULT_LEVELS}] (--prompt: one, [1]).",
    ),
]
MAX_RATE = 1e6  # requests per second: beyond any endpoint, and 1/rate stays a usable interval
RateOpt = Annotated[
    float | None,
    typer.Option(
        "--rate",
        parser=number("--rate", 0.001, MAX_RATE),
        metavar="FLOAT",
        help="Open loop: requests per second (replaces -c).",
    ),
]
ArrivalOpt = Annotated[Arrival, typer.Option("--arrival", help="Open loop: constant or poisson.")]
DurationOpt = Annotated[
    float | None,
    typer.Option(
        "--duration",
        parser=number("--duration", 0.1, MAX_SECONDS),
        metavar="SECONDS",
        help="Seconds per measurement window (default: 2); with --prompt --rate: the deadline "
        "after which no further request is sent (default: none, all --requests).",
    ),
]
StabilityOpt = Annotated[
    float,
    typer.Option(
        "--stability",
        parser=number("--stability", 0, 999, above=True),
        metavar="PERCENT",
        help="A level is stable when its last 3 windows agree within %.",
    ),
]
MaxWindowsOpt = Annotated[
    int,
    typer.Option(
        "--max-windows",
        parser=number("--max-windows", 1, 1000, integer=True),
        metavar="INTEGER",
        help="Windows per level at most.",
    ),
]
ProcessesOpt = Annotated[
    int,
    typer.Option(
        "--processes", min=1, help="Load-generator processes (HTTP/gRPC to Triton; else 1)."
    ),
]
BatchOpt = Annotated[int, typer.Option("--batch", min=1, help="Batch size of generated inputs.")]
InstanceTypeOpt = Annotated[
    str | None,
    typer.Option(
        "--instance-type", help="Record what the unit runs on (ml.g5.xlarge, g5.xlarge) for plan."
    ),
]
GpuOpt = Annotated[
    str | None, typer.Option("--gpu", help="Record the GPU kind of a k8s pod (nvidia-l4) for plan.")
]


@option_group
@dataclass(frozen=True)
class LoadOptions:
    """The load: closed-loop client counts or an open-loop rate, windows until stable, and the
    load generator's processes."""

    concurrency: ConcurrencyOpt = None
    rate: RateOpt = None
    arrival: ArrivalOpt = Arrival.constant
    duration: DurationOpt = None
    stability: StabilityOpt = LOAD.stability.percentage
    max_windows: MaxWindowsOpt = LOAD.stability.max_windows
    processes: ProcessesOpt = DEFAULT_PROCESSES

    def request(self) -> LoadRequest:
        return LoadRequest(
            concurrency=self.concurrency,
            rate=self.rate,
            arrival=self.arrival,
            duration=self.duration,
            stability=self.stability,
            max_windows=self.max_windows,
        )


@option_group
@dataclass(frozen=True)
class RecordedOptions:
    """What the measured unit runs on, recorded for ``tdk plan``."""

    instance_type: InstanceTypeOpt = None
    gpu: GpuOpt = None


@option_group
@dataclass(frozen=True)
class TensorOptions:
    """What a tensor bench sends: example inputs at --batch or --samples, tensors replaced by
    --input / --text, over HTTP or gRPC, binary+json or JSON."""

    batch: BatchOpt = 1
    inputs: InputOpt = None
    text: TextOpt = None
    example: ExampleOpt = False
    samples: SamplesOpt = None
    grpc: GrpcOpt = False
    json_body: JsonBodyOpt = False

    def request(
        self, target_model: str, load: LoadOptions, recorded: RecordedOptions, timeout: float
    ) -> BenchRequest:
        return BenchRequest(
            target_model=target_model,
            load=load.request(),
            inputs=tuple(self.inputs or ()),
            text=self.text,
            batch=self.batch,
            samples=self.samples,
            grpc=self.grpc,
            json_body=self.json_body,
            processes=load.processes,
            timeout=timeout,
            instance_type=recorded.instance_type,
            gpu=recorded.gpu,
        )


class BenchGroup(TyperGroup):
    """``tdk bench``: the tensor bench when no command is named (``tdk bench -c 1,4 ...``);
    ``tdk bench generate`` the generation bench (its old spelling, ``--prompt`` on ``tdk bench``, is
    rewritten by ``cli.main.modernize`` with a deprecation warning)."""

    #: what ``tdk bench`` runs when no command is named
    default_command = "tensors"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


TENSORS, GENERATE = BenchGroup.default_command, "generate"
app = typer.Typer(
    cls=BenchGroup,
    no_args_is_help=True,
    help="Load a deployment: `tdk bench` (tensors) or `tdk bench generate` (LLM text).",
)


@app.command(TENSORS)
@grouped
def bench(
    target_model: TargetModelOpt,
    deployment: DeploymentOptions,
    load: LoadOptions,
    tensors: TensorOptions,
    recorded: RecordedOptions,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    json: JsonOpt = False,
) -> None:
    """Throughput, p50/p90/p99 latency and errors; the first request is reported as cold
    (what `tdk bench` runs when no command is named)."""
    out = Output(json_mode=json)
    check_timeout(timeout)
    request = tensors.request(target_model, load, recorded, timeout)
    _bench_tensors(out, request, deployment.open())


@app.command(GENERATE)
@grouped
def generate(
    target_model: TargetModelOpt,
    deployment: DeploymentOptions,
    load: LoadOptions,
    generation: GenerationOptions,
    recorded: RecordedOptions,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    json: JsonOpt = False,
) -> None:
    """Streamed generation of --prompt/--prompts: TTFT, TPOT, e2e and output tokens/s."""
    out = Output(json_mode=json)
    check_timeout(timeout)
    generation.check()
    request = TensorOptions().request(target_model, load, recorded, timeout)
    _bench_prompts(out, request, generation.request(), deployment.open())


def _bench_tensors(out: Output, r: BenchRequest, located: Deployment) -> None:
    """The cold/warm probe, then the closed-loop levels or one open-loop rate."""
    load = tensor_load(r.load)  # checked before the target is opened
    model = located.model(r.target_model)
    no_decoupled(model, "with `tdk bench generate --prompt TEXT`")
    client = located.inference(r.grpc, r.timeout)
    try:
        prepared = session.prepare(r, load, client, (located.target, model))
        with out.progress() as start:
            record = session.run(prepared, start(f"bench {model.target_model}", prepared.steps))
    finally:
        client.close()
    report(out, record, out.json_mode)


def _bench_prompts(out: Output, r: BenchRequest, asked: GenRequest, located: Deployment) -> None:
    """Each load level of ``r`` (-c levels, or one --rate) of ``asked``'s prompts against the
    release's model; --instance-type and --gpu are recorded for ``tdk plan``, --goodput SLOs
    and --csv shape the report."""
    from infra.perf.bench.genrequest import gen_loads, parse_goodput

    loads = gen_loads(asked, r.load)
    shaped = (parse_goodput(asked.goodput), asked.csv)
    model = located.model(r.target_model)
    client = located.generator(model, r.timeout)
    recorded = {"target": located.target, "instance_type": r.instance_type, "gpu": r.gpu}
    bench_generate(out, client, loads, asked.max_tokens, recorded, shaped)


def report(out: Output, record: dict[str, Any], json: bool) -> None:
    """The record as JSON or a table; after an interrupt, the levels it finished and the
    exit status of the signal (130 for Ctrl-C), as `tdk tune` does."""
    if json:
        out.json(record)
    else:
        if record["interrupted"]:
            done = len(record["levels"])
            out.warn(f"interrupted: reporting the {done} level(s) finished")
        _table(out, record)
    if record["interrupted"]:
        raise typer.Exit(128 + int(record["interrupted"]))
    _check_failures(out, record)


def _check_failures(out: Output, record: dict[str, Any]) -> None:
    """Say how many requests failed whenever any did; every one failing is an error (exit 1):
    a benchmark of nothing but errors measured no model."""
    failed = sum(record["probe_errors"].values())
    failed += sum(sum(level["errors"].values()) for level in record["levels"])
    ok = sum(level["ok"] for level in record["levels"])
    ok += sum(record[key] is not None for key in ("cold_ms", "first_warm_ms"))
    if not failed:
        return
    kinds: dict[str, int] = dict(record["probe_errors"])
    for level in record["levels"]:
        for kind, count in level["errors"].items():
            kinds[kind] = kinds.get(kind, 0) + count
    shown = ", ".join(f"{kind}: {count}" for kind, count in sorted(kinds.items()))
    hint = (
        "send one request with `tdk invoke --example` (same target and model) to see "
        "the model's error, then fix the inputs (--input NAME=...) or the model"
    )
    if ok == 0:
        raise TdkError(
            f"every request failed ({failed} of {failed}: {shown}); nothing was measured",
            hint=hint,
        )
    out.warn(f"{failed} of {failed + ok} requests failed ({shown})")
    empty = [f"{level['mode']} {level['level']}" for level in record["levels"] if not level["ok"]]
    if empty:
        raise TdkError(f"no request succeeded at {', '.join(empty)}: not measured", hint=hint)


def _ms(value: float | None) -> str:
    """A probe's latency, or that it failed (its errors are listed next)."""
    return "failed" if value is None else f"{value} ms"


def _table(out: Output, record: dict[str, Any]) -> None:
    out.info(
        f"{record['target_model']}: cold {_ms(record['cold_ms'])}, "
        f"first warm {_ms(record['first_warm_ms'])}"
    )
    if record["probe_errors"]:
        out.warn(f"probe requests failed: {record['probe_errors']}")
    columns = ["mode", "level", "rps", "stability", "p50 ms", "p90 ms", "p99 ms", "ok", "errors"]
    bound = any(s["client_bound"] for s in record["levels"])
    columns += ["client"] if bound else []  # no column that is empty on every row
    rows = [
        (
            s["mode"],
            s["level"],
            s["throughput_rps"],
            _spread(s),
            s["p50_ms"],
            s["p90_ms"],
            s["p99_ms"],
            s["ok"],
            ", ".join(f"{k}: {v}" for k, v in s["errors"].items()) or "0",
            *(["bound" if s["client_bound"] else "-"] if bound else []),
        )
        for s in record["levels"]
    ]
    runs_on = record["instance_type"] or record["gpu"] or "unrecorded unit"
    title = f"tdk bench ({record['target']}, {runs_on}, {record['body_bytes']} B body)"
    out.table(title, columns, rows)
    if record["client_bound"]:
        out.warn(
            "the load generator was the limit at a level marked 'bound' (its CPU was saturated): "
            "the server may sustain more; raise --processes or run the client on a bigger machine"
        )


def _spread(level: dict[str, Any]) -> str:
    if level["ok"] == 0:
        return "failed: no request succeeded"
    return stability(level["spread"], level["windows"], level["stable"])
