"""Per-component CloudWatch figures, alarms and dashboard, in the MME stack's style (pure).

Invocation metrics of a component live in ``AWS/SageMaker`` and utilisation in
``/aws/sagemaker/InferenceComponents``, both with the ``InferenceComponentName`` dimension
(https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html, "SageMaker AI
inference component metrics", checked 2026-11-24). Copy counts are not a CloudWatch metric
there: ``tdk endpoint status`` reads them from DescribeInferenceComponent.
"""

from __future__ import annotations

from typing import Any

from infra.clouds.aws.sagemaker.metrics import MICROS_TO_MS, MetricSpec
from infra.clouds.aws.sagemaker.monitoring import AlarmSpec
from infra.targets.sagemaker_ic.config import ComponentSpec, IcThresholds
from infra.targets.sagemaker_ic.scaling import (
    COMPONENT_DIMENSION,
    INVOCATION_NAMESPACE,
    NO_CAPACITY_METRIC,
)

UTILIZATION_NAMESPACE = "/aws/sagemaker/InferenceComponents"


def _calls(key: str, label: str, name: str, stat: str, unit: str, scale: float = 1.0) -> MetricSpec:
    return MetricSpec(key, label, INVOCATION_NAMESPACE, name, stat, unit, scale)


def _use(key: str, label: str, name: str) -> MetricSpec:
    return MetricSpec(key, label, UTILIZATION_NAMESPACE, name, "Average", "%")


METRICS: tuple[MetricSpec, ...] = (
    _calls("invocations", "Invocations", "Invocations", "Sum", "count"),
    _calls("errors_4xx", "4xx errors", "Invocation4XXErrors", "Sum", "count"),
    _calls("errors_5xx", "5xx errors", "Invocation5XXErrors", "Sum", "count"),
    _calls("no_capacity", "No-capacity failures", NO_CAPACITY_METRIC, "Sum", "count"),
    _calls("model_latency_p50", "Model latency p50", "ModelLatency", "p50", "ms", MICROS_TO_MS),
    _calls("model_latency_p99", "Model latency p99", "ModelLatency", "p99", "ms", MICROS_TO_MS),
    _calls("overhead_latency", "Overhead latency", "OverheadLatency", "Average", "ms",
           MICROS_TO_MS),
    _calls("invocations_per_copy", "Invocations per copy", "InvocationsPerCopy", "Sum", "count"),
    _use("gpu_utilization", "GPU utilization (normalized)", "GPUUtilizationNormalized"),
    _use("gpu_memory", "GPU memory (normalized)", "GPUMemoryUtilizationNormalized"),
    _use("cpu_utilization", "CPU utilization (normalized)", "CPUUtilizationNormalized"),
    _use("memory_utilization", "Memory utilization (normalized)", "MemoryUtilizationNormalized"),
)  # fmt: skip
BY_KEY = {spec.key: spec for spec in METRICS}

#: dashboard row per component: (title, metric keys)
WIDGETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("invocations and errors", ("invocations", "errors_4xx", "errors_5xx", "no_capacity")),
    ("latency (µs)", ("model_latency_p50", "model_latency_p99", "overhead_latency")),
    ("load per copy", ("invocations_per_copy",)),
    ("utilization (%)", ("gpu_utilization", "gpu_memory", "cpu_utilization", "memory_utilization")),
)


def _metric(namespace: str, metric: str, component: str) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "metric_name": metric,
        "dimensions": {COMPONENT_DIMENSION: component},
        "period": 60,
    }


def _error_rate(component: str) -> list[dict[str, Any]]:
    def query(qid: str, metric: str) -> dict[str, Any]:
        return {
            "id": qid,
            "return_data": False,
            "metric": {**_metric(INVOCATION_NAMESPACE, metric, component), "stat": "Sum"},
        }

    return [
        query("errors", "Invocation5XXErrors"),
        query("invocations", "Invocations"),
        {
            "id": "rate",
            "expression": "IF(invocations > 0, 100 * errors / invocations, 0)",
            "label": "5xx rate (%)",
            "return_data": True,
        },
    ]


def alarm_specs(endpoint: str, spec: ComponentSpec, t: IcThresholds) -> list[AlarmSpec]:
    """The component's 5xx-rate and p99-latency alarms: both roll a component update back."""
    common = {
        "comparison_operator": "GreaterThanThreshold",
        "evaluation_periods": 3,
        "datapoints_to_alarm": 2,
        "treat_missing_data": "notBreaching",
    }
    name = f"{endpoint}-{spec.component}"
    latency = _metric(INVOCATION_NAMESPACE, "ModelLatency", spec.component)
    return [
        AlarmSpec(
            "5xx-rate",
            {
                "name": f"{name}-5xx-rate",
                "alarm_description": f"{spec.component}: 5xx above {t.error_rate_percent}%",
                "metric_queries": _error_rate(spec.component),
                "threshold": float(t.error_rate_percent),
                **common,
            },
            True,
        ),
        AlarmSpec(
            "p99-latency",
            {
                "name": f"{name}-p99-latency",
                "alarm_description": f"{spec.component}: p99 above the {t.latency_slo_ms} ms SLO",
                **latency,
                "extended_statistic": "p99",
                "threshold": float(t.latency_slo_ms * 1000),
                **common,
            },
            True,
        ),
    ]


def dashboard_body(
    region: str, components: list[ComponentSpec], thresholds: IcThresholds
) -> dict[str, Any]:
    """One row of widgets per component (``json.dumps`` it for ``aws.cloudwatch.Dashboard``)."""
    widgets = []
    width = 24 // len(WIDGETS)
    for row, spec in enumerate(components):
        for column, (title, keys) in enumerate(WIDGETS):
            lines = [
                [
                    BY_KEY[key].namespace, BY_KEY[key].name, COMPONENT_DIMENSION, spec.component,
                    {"stat": BY_KEY[key].stat, "label": BY_KEY[key].label},
                ]
                for key in keys
            ]  # fmt: skip
            properties: dict[str, Any] = {
                "title": f"{spec.component}: {title}",
                "view": "timeSeries",
                "region": region,
                "period": 60,
                "metrics": lines,
                "yAxis": {"left": {"min": 0}},
            }
            if title.startswith("latency"):
                slo = {"label": "p99 SLO", "value": thresholds.latency_slo_ms * 1000}
                properties["annotations"] = {"horizontal": [slo]}
            widgets.append(
                {"type": "metric", "x": column * width, "y": row * 6, "width": width,
                 "height": 6, "properties": properties}
            )  # fmt: skip
    return {"widgets": widgets}
