"""Read a SageMaker MME's figures from CloudWatch (``get_metric_data``).

The figures are the dashboard's (``infra.clouds.aws.sagemaker.metrics.METRICS``), each aggregated
over one window; errors become ``EndpointError`` with a hint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from infra.clients.aws_session import aws_errors
from infra.clouds.aws.sagemaker.metrics import METRICS, VARIANT_NAME, MetricSpec, dimensions


@dataclass(frozen=True)
class Figure:
    """One metric over the window: None when CloudWatch has no datapoint for it."""

    spec: MetricSpec
    value: float | None
    datapoints: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.spec.key,
            "label": self.spec.label,
            "value": self.value,
            "unit": self.spec.unit,
            "namespace": self.spec.namespace,
            "metric": self.spec.name,
            "stat": self.spec.stat,
            "datapoints": self.datapoints,
        }


def _query(spec: MetricSpec, endpoint: str, variant: str, period: int) -> dict[str, Any]:
    return {
        "Id": spec.key,
        "Label": spec.label,
        "ReturnData": True,
        "MetricStat": {
            "Metric": {
                "Namespace": spec.namespace,
                "MetricName": spec.name,
                "Dimensions": dimensions(endpoint, variant),
            },
            "Period": period,
            "Stat": spec.stat,
        },
    }


def _combine(spec: MetricSpec, values: list[float]) -> float | None:
    """One value per window; a window split over two periods is summed, maxed or averaged."""
    if not values:
        return None
    if spec.stat == "Sum":
        total = sum(values)
    elif spec.stat == "Maximum":
        total = max(values)
    else:
        total = sum(values) / len(values)
    return total * spec.scale


def window_period(start: datetime, end: datetime) -> int:
    """The whole window as one CloudWatch period (a multiple of 60 s)."""
    seconds = max((end - start).total_seconds(), 60.0)
    return int(math.ceil(seconds / 60.0) * 60)


def endpoint_figures(
    client: Any, endpoint: str, start: datetime, end: datetime, variant: str = VARIANT_NAME
) -> list[Figure]:
    """Every dashboard figure of ``endpoint`` between ``start`` and ``end``."""
    period = window_period(start, end)
    queries = [_query(spec, endpoint, variant, period) for spec in METRICS]
    values: dict[str, list[float]] = {spec.key: [] for spec in METRICS}
    request: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": start, "EndTime": end}
    with aws_errors(f"read CloudWatch metrics of {endpoint}"):
        while True:
            page = client.get_metric_data(**request)
            for result in page.get("MetricDataResults", []):
                values[result["Id"]].extend(float(v) for v in result.get("Values", []))
            token = page.get("NextToken")
            if not token:
                break
            request["NextToken"] = token
    return [
        Figure(spec, _combine(spec, values[spec.key]), len(values[spec.key])) for spec in METRICS
    ]
