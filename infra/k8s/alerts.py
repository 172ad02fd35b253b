"""Alert rules on Triton's metrics, the same PromQL on GKE (Cloud Monitoring) and EKS (AMP)."""

from __future__ import annotations

from dataclasses import dataclass

from infra.k8s import promql


@dataclass(frozen=True)
class AlertRule:
    """One alert: a PromQL condition that must hold for ``for_seconds``."""

    name: str
    query: str
    for_seconds: int
    documentation: str


def alert_rules(
    namespace: str, job: str, latency_slo_ms: int, error_rate_percent: float, queue_ratio: float
) -> list[AlertRule]:
    """Error rate, latency SLO and queue ratio alerts (the same PromQL on GKE and EKS)."""
    return [
        AlertRule(
            "triton-error-rate",
            f"{promql.error_ratio(namespace, job)} > {error_rate_percent / 100:g}",
            300,
            f"More than {error_rate_percent:g}% of Triton requests failed for 5 minutes.",
        ),
        AlertRule(
            "triton-latency-slo",
            f"{promql.p99_latency_ms(namespace, job)} > {latency_slo_ms}",
            300,
            f"p99 request latency above the {latency_slo_ms} ms SLO for 5 minutes.",
        ),
        AlertRule(
            "triton-queue-ratio",
            f"{promql.queue_compute_ratio(namespace, job)} > {queue_ratio:g}",
            600,
            f"Requests queue {queue_ratio:g}x longer than they compute for 10 minutes: "
            "autoscaling is at its bound or GPU nodes cannot be added.",
        ),
    ]
