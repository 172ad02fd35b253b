"""``tdk bench --prompt TEXT | --prompts FILE``: streamed generate requests against an LLM, with
TTFT, TPOT, e2e latency, output tokens/s and errors (``infra.perf.bench.genbench``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.output import Output
from infra.perf.bench.genbench import GenLoad
from tdk.bounded import read_bounded
from tdk.errors import TdkError, UsageError

if TYPE_CHECKING:
    from cli.locate import TargetName
    from infra.clients.generate import Generator
    from infra.perf.bench.request import BenchRequest
    from infra.targets.operations import Locator

PromptsOpt = Annotated[
    Path | None,
    typer.Option("--prompts", help="Generate from these prompts, one per line, used in turn."),
]
RequestsOpt = Annotated[
    int, typer.Option("--requests", min=1, help="With --prompt/--prompts: requests in all.")
]
GoodputOpt = Annotated[
    str | None,
    typer.Option(
        "--goodput",
        help="With --prompt/--prompts: SLOs as AIPerf takes them, e.g. "
        '"time_to_first_token:100 inter_token_latency:3.4" (ms; '
        "output_token_throughput_per_user in tokens/s): goodput is the requests per second "
        "meeting all of them.",
    ),
]
CsvOpt = Annotated[
    Path | None,
    typer.Option("--csv", help="With --prompt/--prompts: also write the metrics as CSV here."),
]
DEFAULT_REQUESTS = 20
PROMPTS_MAX_BYTES = 64 * 1024 * 1024  # prompts are held in memory, all of them


def read_prompts(prompt: str | None, prompts: Path | None) -> tuple[str, ...]:
    """``--prompt`` or the non-empty lines of ``--prompts`` (exactly one of them)."""
    if prompt is not None and prompts is not None:
        raise UsageError("--prompt and --prompts exclude each other", hint="pass one of them")
    if prompts is None:
        return (prompt,) if prompt else ()
    hint = "give a UTF-8 text file with one prompt per line"
    try:  # a regular file only (a FIFO would block, /dev/zero never end), capped
        lines = read_bounded(prompts, PROMPTS_MAX_BYTES).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"--prompts {prompts}: cannot read it ({why})", hint=hint) from None
    found = tuple(line for line in lines if line.strip())
    if not found:
        raise UsageError(f"--prompts {prompts}: no prompt in it", hint="one prompt per line")
    return found


def parse_goodput(text: str | None) -> dict[str, float] | None:
    """``--goodput "name:value ..."`` as AIPerf writes it (None: not asked)."""
    import math

    from infra.perf.bench.genbench import GOODPUT_METRICS

    if text is None:
        return None
    slos: dict[str, float] = {}
    for part in text.split():
        name, _, value = part.partition(":")
        try:
            limit = float(value)
        except ValueError:
            limit = math.nan
        if name not in GOODPUT_METRICS or not math.isfinite(limit) or limit <= 0:
            raise UsageError(
                f"--goodput {part!r}: expected METRIC:VALUE with a value above 0, METRIC one "
                f"of {', '.join(GOODPUT_METRICS)}",
                hint='e.g. --goodput "time_to_first_token:100 inter_token_latency:3.4"',
            )
        slos[name] = limit
    if not slos:
        raise UsageError("--goodput names no SLO", hint="e.g. --goodput time_to_first_token:100")
    return slos


def open_loop_load(load: GenLoad, poisson: bool, deadline_s: float | None) -> GenLoad:
    """``load`` with ``--arrival`` and ``--duration`` (its deadline), which only an open loop
    (``--rate``) uses."""
    if load.rate is None:
        if poisson or deadline_s is not None:
            given = "--arrival poisson" if poisson else "--duration"
            raise UsageError(
                f"{given} applies to an open loop; a --prompt bench without --rate is closed "
                f"(-c {load.concurrency}, --requests {load.requests})",
                hint="add --rate R (requests per second), or drop " + given,
            )
        return load
    if load.rate <= 0:
        raise UsageError(f"--rate {load.rate:g}: must be above 0", hint="e.g. --rate 2")
    return replace(load, poisson=poisson, deadline_s=deadline_s)


def bench_prompts(out: Output, request: BenchRequest, target: TargetName, where: Locator) -> None:
    """Resolve the model in the release (--release, --s3-endpoint-url), then bench each load
    level of ``request`` (-c levels, or one --rate); --instance-type and --gpu are recorded for
    ``tdk plan``, --goodput SLOs and --csv shape the report."""
    from cli.invoke import generate_client, no_tensor_options, resolve_model, target_manifest

    r = request
    no_tensor_options(
        **{"--input": r.inputs, "--text": r.text, "--example": r.example, "--grpc": r.grpc},
        **{"--json-body": r.json_body, "--samples": r.samples},
    )
    loads = gen_loads(r)
    report = (parse_goodput(r.goodput), r.csv)
    manifest = target_manifest(target, where, r.store, r.endpoint_url)
    model = resolve_model(manifest, r.target_model)
    client = generate_client(target, where, model, r.timeout)
    recorded = {"target": target.value, "instance_type": r.instance_type, "gpu": r.gpu}
    bench_generate(out, client, loads, r.max_tokens, recorded, report)


def gen_loads(request: BenchRequest) -> list[GenLoad]:
    """One closed loop per -c level (default 1), or one open loop at --rate."""
    from infra.perf.bench.request import Arrival, levels

    r = request
    clients = (1,) if r.concurrency is None or r.rate is not None else levels(r.concurrency)
    texts = read_prompts(r.prompt, r.prompts)
    poisson = r.arrival is Arrival.poisson
    return [
        open_loop_load(GenLoad(texts, r.requests, n, r.rate), poisson, r.duration) for n in clients
    ]


def bench_generate(
    out: Output,
    client: Generator,
    loads: list[GenLoad],
    max_tokens: int,
    recorded: dict[str, str | None] | None = None,
    report: tuple[dict[str, float] | None, Path | None] = (None, None),
) -> None:
    """Run each load level and print the metrics (tables, or the --json document: one level's
    record, or ``{"runs": [...]}``); exit 1 when no request produced a token."""
    from infra.perf.bench.genbench import run_genbench

    slos, csv_path = report
    records = []
    for load in loads:
        with out.progress() as start:
            advance = start(f"bench {client.model}", load.requests)
            record = run_genbench(
                lambda p: client.generate(p, max_tokens, True), load, advance, slos
            )
        record.update(recorded or {}, model=client.model, max_tokens=max_tokens)
        records.append(record)
    if csv_path is not None:
        write_csv(csv_path, records)
    if out.json_mode:
        out.json(records[0] if len(records) == 1 else {"runs": records})
    else:
        for record in records:
            _table(out, record)
    if not any(record["output_tokens"] for record in records):
        raise TdkError(
            f"no request to {client.model} produced a token "
            f"({sum(r['errors'] for r in records)} failed)",
            hint="check the model streams text (tdk invoke --prompt), the errors above, or "
            "--max-tokens",
        )


def write_csv(path: Path, records: list[dict[str, Any]]) -> None:
    """AIPerf's CSV layout: one row per level and metric, its statistics as columns; then the
    throughputs (``value``)."""
    import csv
    import io

    from infra.perf.bench.genbench import STATS

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["mode", "level", "metric", *STATS, "value"])
    for record in records:
        for name, value in record["metrics"].items():
            if isinstance(value, dict):
                row = [value[s] for s in STATS]
                writer.writerow([record["mode"], record["level"], name, *row, ""])
            else:
                writer.writerow([record["mode"], record["level"], name, *[""] * len(STATS), value])
    try:
        path.write_text(buffer.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--csv {path}: cannot write it ({exc.strerror or exc})",
                         hint="choose a writable path") from None  # fmt: skip


def _table(out: Output, record: dict[str, Any]) -> None:
    metrics = record["metrics"]
    rows = [
        (name, *(_ms(metrics[key][s]) for s in ("avg", "min", "max", "std", "p50", "p90", "p99")))
        for name, key in (
            ("time to first token (ms)", "time_to_first_token"),
            ("inter token latency (ms)", "inter_token_latency"),
            ("request latency (ms)", "request_latency"),
            ("output tokens/s per user", "output_token_throughput_per_user"),
            ("output sequence length", "output_sequence_length"),
            ("input sequence length (words)", "input_sequence_length"),
        )
    ]
    arrival = f", {record['arrival']} arrivals" if record.get("arrival") else ""
    title = (
        f"tdk bench {record['model']} ({record['mode']} {record['level']}{arrival}): "
        f"{record['output_tokens_per_s']} output tokens/s, {record['requests_per_s']} req/s, "
        f"{record['errors']} errors"
    )
    if metrics["goodput"] is not None:
        title += f", goodput {metrics['goodput']} req/s"
    out.table(title, ["metric", "avg", "min", "max", "std", "p50", "p90", "p99"], rows)
    if record["errors"]:
        out.warn(f"failed requests: {record['error_kinds']}")
    if record["unsent"]:
        out.warn(
            f"{record['unsent']} of {record['requests']} requests were scheduled after the "
            f"{record['deadline_s']:g} s deadline and not sent"
        )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
