"""``tdk metrics``: a deployment's dashboard figures, for every target, as a table or JSON.

SageMaker from CloudWatch; the Kubernetes targets from their managed Prometheus with the
dashboards' PromQL; local from the endpoint's own SageMaker-named figures.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

import typer

from cli.common import JsonOpt
from cli.groups import grouped
from cli.locate import MetricsWhereOptions
from cli.output import Output
from tdk.errors import UsageError

_SINCE = re.compile(r"^([1-9][0-9]*)([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: CloudWatch keeps 1-minute datapoints for 15 days
MAX_WINDOW = timedelta(days=15)


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


SinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Window ending now: 30m, 1h, 2d (default: sagemaker 1h; Kubernetes targets the "
        "rate window, the dashboards' 2m; local keeps figures since start).",
    ),
]


def _format(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value.is_integer() else f"{value:,.4g}"


@grouped
def metrics(
    where: MetricsWhereOptions,
    since: SinceOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Invocations, latency, errors, queueing and utilisation of a deployment."""
    out = Output(json_mode=json_mode)
    window = parse_since(since) if since else None
    deployment = where.open()
    client = deployment.where.client()
    readings = client.metrics(window)
    located = client.where()
    if json_mode:
        out.json(
            {
                "target": deployment.target,
                **located,
                "since": since,
                "metrics": [r.as_dict() for r in readings],
            }
        )
        return
    rows = [(r.label, _format(r.value), r.unit) for r in readings]
    place = ", ".join(f"{k} {v}" for k, v in located.items() if v)
    out.table(
        f"{deployment.target}: {place}" + (f", last {since}" if since else ""),
        ["metric", "value", "unit"],
        rows,
    )
    if all(r.value is None for r in readings):
        out.info("no data yet: figures appear after the first requests are served and scraped")
