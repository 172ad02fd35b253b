"""The ``k8s*`` stack keys shared by GKE and EKS, read into one frozen workload config."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from infra.config import ConfigReader, check_capacity, qualify
from infra.facts.triton import default_kubernetes_triton_image
from infra.k8s.spec import (
    ModelSync,
    PrometheusSource,
    Resources,
    Scaling,
    ServiceExposure,
    TritonServiceSpec,
    WorkloadKind,
)
from tdk.errors import ConfigError

KINDS: tuple[str, ...] = ("gpu", "cpu")
EXPOSURES: tuple[str, ...] = ("cluster-ip", "internal-lb", "external-lb")
_DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class AlertThresholds:
    """When the dashboards' alerts fire."""

    latency_slo_ms: int
    error_rate_percent: float
    queue_ratio: float
    email: str | None


@dataclass(frozen=True)
class WorkloadConfig:
    """The Triton workload as the stack configures it (cloud-independent)."""

    namespace: str
    image: str
    kind: WorkloadKind
    gpus_per_pod: int
    cpu: str
    memory: str
    scaling: Scaling
    exposure: ServiceExposure
    startup_budget_seconds: int
    log_verbose: int
    alerts: AlertThresholds


def read_workload_config(reader: ConfigReader) -> WorkloadConfig:
    """Read and check every ``k8s*`` key (ConfigError naming the key on a bad value)."""
    kind = cast(WorkloadKind, reader.choice("k8sWorkloadKind", KINDS))
    low = reader.integer("k8sMinReplicas", minimum=1)
    high = reader.integer("k8sMaxReplicas", minimum=1)
    check_capacity("k8sMinReplicas", low, "k8sMaxReplicas", high)
    scaling = Scaling(
        min_replicas=low,
        max_replicas=high,
        queue_ratio_target=reader.number("k8sQueueRatioTarget", minimum=0.01),
        polling_seconds=reader.integer("k8sPollingSeconds", minimum=5, maximum=600),
        cooldown_seconds=reader.integer("k8sCooldownSeconds", minimum=30),
    )
    return WorkloadConfig(
        namespace=dns_label(reader, "k8sNamespace"),
        image=reader.optional_string("k8sTritonImage") or default_kubernetes_triton_image(),
        kind=kind,
        gpus_per_pod=reader.integer("k8sGpusPerPod", minimum=1, maximum=8),
        cpu=reader.string("k8sCpu"),
        memory=reader.string("k8sMemory"),
        scaling=scaling,
        exposure=cast(ServiceExposure, reader.choice("k8sServiceExposure", EXPOSURES)),
        startup_budget_seconds=reader.integer("k8sStartupBudgetSeconds", minimum=60),
        log_verbose=reader.integer("k8sTritonLogVerbose", minimum=0, maximum=3),
        alerts=AlertThresholds(
            latency_slo_ms=reader.integer("k8sLatencySloMs", minimum=1),
            error_rate_percent=reader.number("k8sErrorRatePercent", minimum=0, maximum=100),
            queue_ratio=reader.number("k8sQueueRatioAlarm", minimum=0.01),
            email=reader.optional_string("k8sAlertEmail"),
        ),
    )


def workload_spec(
    config: WorkloadConfig,
    *,
    name: str,
    load_balancers: Mapping[str, Mapping[str, str]],
    model_repository: str,
    prometheus: PrometheusSource,
    identity_annotations: Mapping[str, Any],
    env: Mapping[str, str],
    pod_monitoring: bool,
    model_sync: ModelSync | None = None,
) -> TritonServiceSpec:
    """The plain spec the manifests are built from (Pulumi and ``tdk render`` alike)."""
    gpus = config.gpus_per_pod if config.kind == "gpu" else 0
    return TritonServiceSpec(
        name=name,
        namespace=config.namespace,
        service_annotations=dict(load_balancers.get(config.exposure, {})),
        kind=config.kind,
        image=config.image,
        model_repository=model_repository,
        resources=Resources(
            cpu=config.cpu,
            memory=config.memory,
            cpu_limit=config.cpu,
            memory_limit=config.memory,
            gpus=gpus,
        ),
        scaling=config.scaling,
        prometheus=prometheus,
        exposure=config.exposure,
        startup_budget_seconds=config.startup_budget_seconds,
        pod_monitoring=pod_monitoring,
        identity_annotations=dict(identity_annotations),
        env=dict(env),
        log_verbose=config.log_verbose,
        model_sync=model_sync,
    )


def dns_label(reader: ConfigReader, key: str) -> str:
    """A Kubernetes namespace-style name (RFC 1123 label)."""
    value = reader.string(key)
    if not _DNS_LABEL.match(value):
        raise ConfigError(
            f"{qualify(key)} is {value!r}: use 1-63 of a-z 0-9 and -, starting and ending "
            "with a letter or digit",
            hint=f"`pulumi config set {qualify(key)} triton`",
        )
    return value
