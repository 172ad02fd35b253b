"""``tdk bench``: load any target: a closed-loop concurrency sweep or an open-loop request rate."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from cli.common import EndpointUrlOpt, JsonOpt, RegionOpt
from cli.invoke import (
    EndpointOpt,
    GrpcOpt,
    InputOpt,
    JsonBodyOpt,
    ManifestStoreOpt,
    TargetKind,
    TargetModelOpt,
    TargetOpt,
    TextOpt,
    UrlOpt,
    gather_inputs,
    open_target,
    resolve_model,
)
from cli.output import Output
from tdk.errors import UsageError


class Arrival(StrEnum):
    constant = "constant"
    poisson = "poisson"


ConcurrencyOpt = Annotated[
    str, typer.Option("--concurrency", "-c", help="Closed loop: comma-separated client counts.")
]
RateOpt = Annotated[
    float | None, typer.Option("--rate", help="Open loop: requests per second (replaces -c).")
]
ArrivalOpt = Annotated[Arrival, typer.Option("--arrival", help="Open loop: constant or poisson.")]
DurationOpt = Annotated[float, typer.Option("--duration", min=0.1, help="Seconds per load level.")]
BatchOpt = Annotated[int, typer.Option("--batch", min=1, help="Batch size of generated inputs.")]


def _levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1:
        raise UsageError(
            f"--concurrency {text!r}: expected positive integers", hint="e.g. -c 1,4,16"
        )
    return levels


def bench(
    target_model: TargetModelOpt,
    target: TargetOpt = TargetKind.local,
    endpoint: EndpointOpt = "local",
    concurrency: ConcurrencyOpt = "1,2,4,8",
    rate: RateOpt = None,
    arrival: ArrivalOpt = Arrival.constant,
    duration: DurationOpt = 5.0,
    batch: BatchOpt = 1,
    inputs: InputOpt = None,
    text: TextOpt = None,
    store: ManifestStoreOpt = None,
    url: UrlOpt = None,
    grpc: GrpcOpt = False,
    json_body: JsonBodyOpt = False,
    region: RegionOpt = None,
    endpoint_url: EndpointUrlOpt = None,
    json: JsonOpt = False,
) -> None:
    """Throughput, p50/p90/p99 latency and errors; the first request is reported as cold."""
    from infra.clients.inputs import example_inputs
    from infra.perf import loadgen

    out = Output(json_mode=json)
    client, manifest = open_target(target, endpoint, store, url, grpc, region, endpoint_url)
    model = resolve_model(manifest, target_model, target)
    given = inputs or text is not None
    arrays = gather_inputs(model, inputs, text) if given else example_inputs(model, batch)
    request = client.prepare(model, arrays, binary=not json_body)

    def send() -> object:
        return client.send(model, request)

    try:
        cold_ms, warm_ms = loadgen.cold_then_warm(send)
        if rate is not None:
            poisson = arrival is Arrival.poisson
            results = [loadgen.open_loop(send, rate, duration, poisson=poisson)]
        else:
            results = [loadgen.closed_loop(send, level, duration) for level in _levels(concurrency)]
    finally:
        client.close()
    summaries = [result.summary() for result in results]
    if json:
        out.json(
            {
                "target": target.value,
                "target_model": model.target_model,
                "body_bytes": len(request.body),
                "cold_ms": round(cold_ms, 3),
                "first_warm_ms": round(warm_ms, 3),
                "levels": summaries,
            }
        )
        return
    out.info(f"{model.target_model}: cold {cold_ms:.1f} ms, first warm {warm_ms:.2f} ms")
    columns = ["mode", "level", "rps", "p50 ms", "p90 ms", "p99 ms", "ok", "errors"]
    rows = [
        (
            s["mode"],
            s["level"],
            s["throughput_rps"],
            s["p50_ms"],
            s["p90_ms"],
            s["p99_ms"],
            s["ok"],
            ", ".join(f"{k}: {v}" for k, v in s["errors"].items()) or "0",
        )
        for s in summaries
    ]
    out.table(f"tdk bench ({target.value}, {len(request.body)} B body)", columns, rows)
