"""The PromQL every target uses: KEDA's scaling query and the dashboard/alert figures.

Both clouds scrape Triton's ``/metrics`` into a managed Prometheus (Google Managed Prometheus,
Amazon Managed Service for Prometheus) with ``namespace`` and ``job`` labels naming the
workload, so one set of queries serves KEDA, dashboards and alerts everywhere.
"""

from __future__ import annotations

WINDOW = "2m"


def selector(namespace: str, job: str) -> str:
    """The label matcher for one workload's series."""
    return f'{{namespace="{namespace}",job="{job}"}}'


def queue_compute_ratio(namespace: str, job: str, window: str = WINDOW) -> str:
    """Time requests wait in Triton's queues per unit of compute time, over all models and pods.

    Average queue time alone under-reports when several models share the GPU (idle models
    dilute it); the ratio grows as soon as any model waits longer than it computes. An idle
    workload reads 0 (no series, or no compute).
    """
    sel = selector(namespace, job)
    queue = f"sum(rate(nv_inference_queue_duration_us{sel}[{window}]))"
    compute = f"sum(rate(nv_inference_compute_infer_duration_us{sel}[{window}]))"
    return f"(({queue}) / clamp_min({compute}, 1)) or vector(0)"


def request_rate(namespace: str, job: str, window: str = WINDOW) -> str:
    """Successful inferences per second."""
    return f"sum(rate(nv_inference_request_success{selector(namespace, job)}[{window}]))"


def error_ratio(namespace: str, job: str, window: str = WINDOW) -> str:
    """Failed requests over all requests (0 when idle)."""
    sel = selector(namespace, job)
    failed = f"sum(rate(nv_inference_request_failure{sel}[{window}]))"
    ok = f"sum(rate(nv_inference_request_success{sel}[{window}]))"
    return f"(({failed}) / clamp_min(({failed}) + ({ok}), 1e-9)) or vector(0)"


def p99_latency_ms(namespace: str, job: str) -> str:
    """The worst pod's p99 end-to-end request latency in ms (Triton's summary quantiles)."""
    sel = selector(namespace, job)[:-1] + ',quantile="0.99"}'
    return f"max(nv_inference_request_summary_us{sel}) / 1000"


def gpu_utilization(namespace: str, job: str) -> str:
    """Mean GPU utilisation (0..1) over the workload's GPUs."""
    return f"avg(nv_gpu_utilization{selector(namespace, job)})"


def replicas(namespace: str, job: str) -> str:
    """Pods currently scraped (serving) for the workload."""
    return f"count(count by (pod) (nv_cpu_utilization{selector(namespace, job)}))"


def figures(namespace: str, job: str) -> dict[str, str]:
    """Dashboard figures by title, in display order."""
    return {
        "Requests / s": request_rate(namespace, job),
        "p99 latency (ms)": p99_latency_ms(namespace, job),
        "Queue / compute ratio": queue_compute_ratio(namespace, job),
        "Error ratio": error_ratio(namespace, job),
        "GPU utilization": gpu_utilization(namespace, job),
        "Replicas": replicas(namespace, job),
    }
