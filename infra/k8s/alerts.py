"""Alert rules on Triton's metrics, the same PromQL on GKE (Cloud Monitoring) and EKS (AMP).

Each rule compares the bare figure (``idle_zero=False``): ``(x) or vector(0) > t`` would parse as
``x or (vector(0) > t)`` and fire whenever ``x`` exists. ``rules_yaml`` writes the rules as a
plain Prometheus rule file (``groups:`` format) for ``promtool`` and self-run Prometheus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from infra.k8s import promql
from infra.k8s.config import AlertThresholds
from packager.engines import VLLM

#: the file ``tdk render k8s`` writes next to the manifests
RULE_FILE = "alerts.rules.yaml"
GROUP = "triton"
#: minutes without any Triton series before the alert fires. "While pods run" is always, since
#: k8sMinReplicas >= 1; kube-state-metrics is not on both clouds (the AMP scraper only scrapes
#: what is installed), so no pod-count series can gate it. A Prometheus marks series stale on the
#: first failed scrape; GMP (Monarch) has no staleness, so there it fires after the 5 m lookback
#: plus this.
ABSENT_MINUTES = 10
#: evictions per second per pod, for 10 minutes, that mean the cache thrashes: the copies in
#: use do not fit the pods' budgets and KEDA (which adds pods from 0.1/s) is at its bound
THRASH_EVICTIONS_PER_POD_S = 0.5


@dataclass(frozen=True)
class AlertRule:
    """One alert: a PromQL condition that must hold for ``for_seconds``."""

    name: str
    query: str
    for_seconds: int
    documentation: str
    severity: str = "warning"


def alert_rules(
    namespace: str,
    job: str,
    latency_slo_ms: int,
    error_rate_percent: float,
    queue_ratio: float,
    absent_minutes: int = ABSENT_MINUTES,
    engines: tuple[str, ...] = (),
    ttft_slo_ms: int | None = None,
    streamed: tuple[str, ...] = (),
) -> list[AlertRule]:
    """Error rate, latency SLO, queue ratio and missing-series alerts (alike on every Kubernetes
    target); with ``streamed`` models or LLM ``engines`` (those whose own metrics are exported),
    TTFT and (vLLM) end-to-end latency alerts too (``llm_rules``). The p99 latency rule leaves the
    streamed models out: their request latency is a whole generation."""
    error_ratio = promql.error_ratio(namespace, job, idle_zero=False)
    queue = promql.queue_compute_ratio(namespace, job, idle_zero=False)
    llm = (
        llm_rules(namespace, job, engines, latency_slo_ms, ttft_slo_ms)
        if engines or streamed
        else []
    )
    return [
        AlertRule(
            "triton-error-rate",
            f"{error_ratio} > {error_rate_percent / 100:g}",
            300,
            f"More than {error_rate_percent:g}% of Triton requests failed for 5 minutes.",
        ),
        AlertRule(
            "triton-latency-slo",
            f"{promql.p99_latency_ms(namespace, job, streamed)} > {latency_slo_ms}",
            300,
            f"p99 request latency above the {latency_slo_ms} ms SLO for 5 minutes.",
        ),
        AlertRule(
            "triton-queue-ratio",
            f"{queue} > {queue_ratio:g}",
            600,
            f"Requests queue {queue_ratio:g}x longer than they compute for 10 minutes: "
            "autoscaling is at its bound or GPU nodes cannot be added.",
        ),
        AlertRule(
            "triton-metrics-absent",
            promql.series_absent(namespace, job),
            absent_minutes * 60,
            f"No Triton series from {namespace}/{job} for {absent_minutes} minutes although at "
            "least one pod should run: the scraper cannot reach port 8002, or no pod starts. "
            "KEDA reads 0 meanwhile and will not scale.",
            severity="critical",
        ),
        *llm,
    ]


def multi_model_rules(namespace: str, job: str, cold_load_seconds: int) -> list[AlertRule]:
    """``mme`` workloads: eviction thrash, the p99 wait of a cold request (download and load,
    while loads happen: the fronts' summary keeps its last samples when none do) and failed
    loads (download, checksum or Triton's load)."""
    sel = promql.selector(namespace, job)
    evictions = promql.evictions_per_second(namespace, job, "5m", idle_zero=False)
    pods = f"count(count by (pod) (tdk_loaded_model_count{sel}))"
    wait = promql.timer_p99_ms(namespace, job, "tdk_model_loading_wait_time_microseconds")
    loads = f"sum(rate(tdk_model_loading_wait_time_microseconds_count{sel}[5m]))"
    return [
        AlertRule(
            "front-eviction-thrash",
            f"({evictions}) / clamp_min({pods}, 1) > {THRASH_EVICTIONS_PER_POD_S:g}",
            600,
            f"Each pod unloaded more than {THRASH_EVICTIONS_PER_POD_S:g} models a second for 10 "
            "minutes: the models in use do not fit the pods' memory budgets. Raise "
            "k8sMaxReplicas or the budget (tdk plan --mme-trace sizes both).",
        ),
        AlertRule(
            "front-cold-load-p99",
            f"({wait} > {cold_load_seconds * 1000}) and on() ({loads} > 0)",
            300,
            f"p99 wait of a request whose model was not loaded above {cold_load_seconds} s "
            "for 5 minutes (download and load; ModelLoadingWaitTime).",
        ),
        AlertRule(
            "front-load-failures",
            f"{promql.load_failures(namespace, job, '10m')} > 0",
            60,
            "A model failed to load in the last 10 minutes (download, checksum against the "
            "release's manifest, or Triton's load): the front's log names it.",
            severity="critical",
        ),
    ]


def llm_rules(
    namespace: str,
    job: str,
    engines: tuple[str, ...],
    latency_slo_ms: int,
    ttft_slo_ms: int | None,
) -> list[AlertRule]:
    """p99 time to first token from Triton's first-response histogram (every decoupled model;
    the workload runs Triton with ``histogram_latencies`` on), and for vLLM the engine's own
    p99 end-to-end latency. Neither has a value while idle, so neither fires then."""
    ttft = latency_slo_ms if ttft_slo_ms is None else ttft_slo_ms
    rules = [
        AlertRule(
            "triton-ttft-slo",
            f"{promql.ttft_p99_ms(namespace, job)} > {ttft}",
            300,
            f"p99 time to first token above {ttft} ms for 5 minutes.",
        )
    ]
    if VLLM in engines:
        rules.append(
            AlertRule(
                "vllm-e2e-slo",
                f"{promql.vllm_e2e_p99_ms(namespace, job)} > {latency_slo_ms}",
                300,
                f"p99 end-to-end generation latency above {latency_slo_ms} ms for 5 minutes.",
            )
        )
    return rules


def rule_groups(rules: list[AlertRule]) -> dict[str, Any]:
    """The rules as a Prometheus rule file document (``groups:``), as AMP and promtool read it."""
    return {
        "groups": [
            {
                "name": GROUP,
                "rules": [
                    {
                        "alert": rule.name,
                        "expr": rule.query,
                        "for": f"{rule.for_seconds}s",
                        "labels": {"severity": rule.severity},
                        "annotations": {"summary": rule.documentation},
                    }
                    for rule in rules
                ],
            }
        ]
    }


def rules_yaml(rules: list[AlertRule]) -> str:
    """``rule_groups`` as YAML text."""
    return yaml.safe_dump(rule_groups(rules), sort_keys=False, width=1000)


def workload_rules(namespace: str, job: str, alerts: AlertThresholds) -> list[AlertRule]:
    """The rules of one (model-fitted) workload: what ``tdk render`` writes and both clouds
    deploy, the LLM rules included where its models stream or run an engine with metrics, the
    multi-model rules in ``mme`` mode."""
    mme = multi_model_rules(namespace, job, alerts.cold_load_seconds) if alerts.multi_model else []
    return mme + alert_rules(
        namespace,
        job,
        alerts.latency_slo_ms,
        alerts.error_rate_percent,
        alerts.queue_ratio,
        engines=alerts.metric_engines,
        streamed=alerts.streamed_models,
    )
