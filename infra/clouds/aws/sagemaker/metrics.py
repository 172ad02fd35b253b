"""The CloudWatch figures of a SageMaker MME, defined once for the dashboard and ``tdk metrics``.

Invocation and model-loading metrics live in ``AWS/SageMaker``; per-instance utilisation and
``LoadedModelCount`` in ``/aws/sagemaker/Endpoints``. Both use the EndpointName and
VariantName dimensions. Latencies are published in microseconds and shown in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

INVOCATION_NAMESPACE = "AWS/SageMaker"
INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
#: the kit deploys one production variant under this name (blue/green keeps it)
VARIANT_NAME = "AllTraffic"


@dataclass(frozen=True)
class MetricSpec:
    """One figure: where CloudWatch keeps it, which statistic, and how to show it."""

    key: str
    label: str
    namespace: str
    name: str
    stat: str
    unit: str
    #: the published value is multiplied by this to get ``unit`` (µs -> ms: 0.001)
    scale: float = 1.0


def _calls(key: str, label: str, name: str, stat: str, unit: str, scale: float = 1.0) -> MetricSpec:
    return MetricSpec(key, label, INVOCATION_NAMESPACE, name, stat, unit, scale)


def _instance(key: str, label: str, name: str, stat: str, unit: str) -> MetricSpec:
    return MetricSpec(key, label, INSTANCE_NAMESPACE, name, stat, unit)


MICROS_TO_MS = 0.001

METRICS: tuple[MetricSpec, ...] = (
    _calls("invocations", "Invocations", "Invocations", "Sum", "count"),
    _calls("model_latency_p50", "Model latency p50", "ModelLatency", "p50", "ms", MICROS_TO_MS),
    _calls("model_latency_p99", "Model latency p99", "ModelLatency", "p99", "ms", MICROS_TO_MS),
    _calls("overhead_latency", "Overhead latency", "OverheadLatency", "Average", "ms",
           MICROS_TO_MS),
    _calls("errors_4xx", "4xx errors", "Invocation4XXErrors", "Sum", "count"),
    _calls("errors_5xx", "5xx errors", "Invocation5XXErrors", "Sum", "count"),
    _instance("loaded_models", "Loaded models (max)", "LoadedModelCount", "Maximum", "count"),
    _calls("cache_hit_rate", "Model cache hit rate", "ModelCacheHit", "Average", "%", 100.0),
    _calls("model_loading_wait", "Model loading wait", "ModelLoadingWaitTime", "Average", "ms",
           MICROS_TO_MS),
    _calls("model_downloading", "Model downloading", "ModelDownloadingTime", "Average", "ms",
           MICROS_TO_MS),
    _instance("gpu_utilization", "GPU utilization", "GPUUtilization", "Average", "%"),
    _instance("gpu_memory", "GPU memory utilization", "GPUMemoryUtilization", "Average", "%"),
    _instance("cpu_utilization", "CPU utilization", "CPUUtilization", "Average", "%"),
    _instance("disk_utilization", "Disk utilization", "DiskUtilization", "Average", "%"),
)  # fmt: skip

BY_KEY: dict[str, MetricSpec] = {spec.key: spec for spec in METRICS}


def dimensions(endpoint_name: str, variant_name: str = VARIANT_NAME) -> list[dict[str, str]]:
    """CloudWatch API dimensions of an endpoint variant."""
    return [
        {"Name": "EndpointName", "Value": endpoint_name},
        {"Name": "VariantName", "Value": variant_name},
    ]
