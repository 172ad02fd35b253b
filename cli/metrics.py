"""``tdk metrics``: a SageMaker MME's dashboard figures from CloudWatch, as a table or JSON."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated

import typer

from cli.common import JsonOpt, RegionOpt
from cli.output import Output
from tdk.errors import UsageError

_SINCE = re.compile(r"^([1-9][0-9]*)([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: CloudWatch keeps 1-minute datapoints for 15 days
MAX_WINDOW = timedelta(days=15)


class MetricsTarget(StrEnum):
    sagemaker = "sagemaker"


def parse_since(text: str) -> timedelta:
    """``90s``, ``30m``, ``1h``, ``2d`` -> timedelta (at most 15 days)."""
    match = _SINCE.match(text.strip())
    if not match:
        raise UsageError(f"--since {text!r} is not a duration", hint="use e.g. 30m, 1h or 2d")
    window = timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    if window > MAX_WINDOW:
        raise UsageError(
            f"--since {text} is longer than the 15 days CloudWatch keeps minute data",
            hint="use at most 15d",
        )
    return window


def _format(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"


def metrics(
    endpoint: Annotated[str, typer.Option("--endpoint", help="SageMaker endpoint name.")],
    target: Annotated[
        MetricsTarget, typer.Option("--target", help="Where the endpoint runs: sagemaker.")
    ],
    since: Annotated[str, typer.Option("--since", help="Window ending now: 30m, 1h, 2d.")] = "1h",
    region: RegionOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Invocations, latency, errors, model cache and utilisation over a window (CloudWatch)."""
    from infra.clients.aws_session import aws_client
    from infra.targets.sagemaker.cloudwatch import endpoint_figures

    out = Output(json_mode=json_mode)
    window = parse_since(since)
    end = datetime.now(UTC).replace(microsecond=0)
    start = end - window
    client = aws_client("cloudwatch", region)
    figures = endpoint_figures(client, endpoint, start, end)
    if json_mode:
        out.json(
            {
                "target": target.value,
                "endpoint": endpoint,
                "region": client.meta.region_name,
                "start": start.isoformat(),
                "end": end.isoformat(),
                "metrics": [figure.as_dict() for figure in figures],
            }
        )
        return
    rows = [(f.spec.label, _format(f.value), f.spec.unit, f.datapoints) for f in figures]
    out.table(
        f"{endpoint} ({client.meta.region_name}), last {since}",
        ["metric", "value", "unit", "datapoints"],
        rows,
    )
    if not any(f.datapoints for f in figures):
        out.info("no datapoints yet: CloudWatch shows an endpoint's figures after its first calls")
