"""CloudWatch dashboard body and alarms of a SageMaker MME, as plain data.

Two alarms watch what a bad release breaks (5xx rate, p99 latency over the SLO): they are the
blue/green rollback alarms. The others (GPU memory, disk, cache-hit rate) page people.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.clouds.aws.sagemaker.metrics import (
    BY_KEY,
    INSTANCE_NAMESPACE,
    INVOCATION_NAMESPACE,
    VARIANT_NAME,
    MetricSpec,
)

#: dashboard rows: (title, metric keys, y-axis label)
WIDGETS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Invocations and errors", ("invocations", "errors_4xx", "errors_5xx"), "count / min"),
    ("Latency", ("model_latency_p50", "model_latency_p99", "overhead_latency"), "microseconds"),
    ("Model cache", ("loaded_models", "cache_hit_rate"), "models / hit ratio"),
    ("Model loading", ("model_loading_wait", "model_downloading"), "microseconds"),
    ("GPU", ("gpu_utilization", "gpu_memory"), "percent"),
    ("CPU and disk", ("cpu_utilization", "disk_utilization"), "percent"),
)


@dataclass(frozen=True)
class AlarmThresholds:
    """Alarm thresholds from the stack config."""

    latency_slo_ms: int
    error_rate_percent: int
    gpu_memory_percent: int
    disk_percent: int
    cache_hit_percent: int


@dataclass(frozen=True)
class AlarmSpec:
    """One CloudWatch alarm: ``args`` are ``aws.cloudwatch.MetricAlarm`` keyword arguments."""

    key: str
    args: dict[str, Any]
    #: a firing rollback alarm during a blue/green update rolls the endpoint back
    rollback: bool


def _metric_line(spec: MetricSpec, endpoint: str, variant: str) -> list[Any]:
    return [
        spec.namespace,
        spec.name,
        "EndpointName",
        endpoint,
        "VariantName",
        variant,
        {"stat": spec.stat, "label": spec.label},
    ]


def dashboard_body(
    endpoint: str, region: str, thresholds: AlarmThresholds, variant: str = VARIANT_NAME
) -> dict[str, Any]:
    """The dashboard JSON (``json.dumps`` it for ``aws.cloudwatch.Dashboard``)."""
    annotations: dict[str, list[dict[str, Any]]] = {
        "Latency": [{"label": "p99 SLO", "value": thresholds.latency_slo_ms * 1000}],
        "GPU": [{"label": "GPU memory alarm", "value": thresholds.gpu_memory_percent}],
        "CPU and disk": [{"label": "disk alarm", "value": thresholds.disk_percent}],
    }
    widgets = []
    for index, (title, keys, axis) in enumerate(WIDGETS):
        properties: dict[str, Any] = {
            "title": title,
            "view": "timeSeries",
            "region": region,
            "period": 60,
            "metrics": [_metric_line(BY_KEY[key], endpoint, variant) for key in keys],
            "yAxis": {"left": {"label": axis, "min": 0}},
        }
        if title in annotations:
            properties["annotations"] = {"horizontal": annotations[title]}
        widgets.append(
            {
                "type": "metric",
                "x": (index % 2) * 12,
                "y": (index // 2) * 6,
                "width": 12,
                "height": 6,
                "properties": properties,
            }
        )
    return {"widgets": widgets}


def dashboard_url(region: str, dashboard_name: str) -> str:
    """Console URL of a CloudWatch dashboard."""
    host = "console.amazonaws.cn" if region.startswith("cn-") else "console.aws.amazon.com"
    return (
        f"https://{region}.{host}/cloudwatch/home?region={region}#dashboards:name={dashboard_name}"
    )


def _single(endpoint: str, variant: str, namespace: str, metric: str, stat: str) -> dict[str, Any]:
    statistic = {"extended_statistic": stat} if stat.startswith("p") else {"statistic": stat}
    return {
        "namespace": namespace,
        "metric_name": metric,
        "dimensions": {"EndpointName": endpoint, "VariantName": variant},
        "period": 60,
        **statistic,
    }


def _error_rate(endpoint: str, variant: str, percent: int) -> dict[str, Any]:
    def query(qid: str, metric: str) -> dict[str, Any]:
        return {
            "id": qid,
            "return_data": False,
            "metric": {
                "namespace": INVOCATION_NAMESPACE,
                "metric_name": metric,
                "dimensions": {"EndpointName": endpoint, "VariantName": variant},
                "period": 60,
                "stat": "Sum",
            },
        }

    return {
        "metric_queries": [
            query("errors", "Invocation5XXErrors"),
            query("invocations", "Invocations"),
            {
                "id": "rate",
                "expression": "IF(invocations > 0, 100 * errors / invocations, 0)",
                "label": "5xx rate (%)",
                "return_data": True,
            },
        ],
        "threshold": float(percent),
    }


def alarm_specs(
    endpoint: str, thresholds: AlarmThresholds, gpu: bool, variant: str = VARIANT_NAME
) -> list[AlarmSpec]:
    """Every alarm of the endpoint; the GPU memory alarm only on GPU instances."""
    t = thresholds
    common = {
        "evaluation_periods": 3,
        "datapoints_to_alarm": 2,
        "treat_missing_data": "notBreaching",
    }
    above = {"comparison_operator": "GreaterThanThreshold", **common}

    def spec(key: str, what: str, rollback: bool, **args: Any) -> AlarmSpec:
        return AlarmSpec(
            key, {"name": f"{endpoint}-{key}", "alarm_description": what, **args}, rollback
        )

    def single(ns: str, metric: str, stat: str) -> dict[str, Any]:
        return _single(endpoint, variant, ns, metric, stat)

    specs = [
        spec("5xx-rate", f"5xx responses above {t.error_rate_percent}% of invocations", True,
             **above, **_error_rate(endpoint, variant, t.error_rate_percent)),
        spec("p99-latency", f"p99 ModelLatency above the {t.latency_slo_ms} ms SLO", True,
             **above, **single(INVOCATION_NAMESPACE, "ModelLatency", "p99"),
             threshold=float(t.latency_slo_ms * 1000)),
        spec("disk", f"DiskUtilization above {t.disk_percent}% (MME archive cache)", False,
             **above, **single(INSTANCE_NAMESPACE, "DiskUtilization", "Average"),
             threshold=float(t.disk_percent)),
        spec("cache-hit-rate", f"ModelCacheHit below {t.cache_hit_percent}% (models thrash)",
             False, **common, comparison_operator="LessThanThreshold",
             **single(INVOCATION_NAMESPACE, "ModelCacheHit", "Average"),
             threshold=t.cache_hit_percent / 100),
    ]  # fmt: skip
    if gpu:
        specs.append(
            spec("gpu-memory", f"GPUMemoryUtilization above {t.gpu_memory_percent}%", False,
                 **above, **single(INSTANCE_NAMESPACE, "GPUMemoryUtilization", "Average"),
                 threshold=float(t.gpu_memory_percent))
        )  # fmt: skip
    return specs
