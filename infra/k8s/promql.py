"""The PromQL every target uses: KEDA's scaling query and the dashboard/alert figures.

Both clouds scrape Triton's ``/metrics`` into a managed Prometheus (Google Managed Prometheus,
Amazon Managed Service for Prometheus) with ``namespace`` and ``job`` labels naming the
workload, so one set of queries serves KEDA, dashboards, alerts and ``tdk metrics`` everywhere.

Dashboards and KEDA read ``... or vector(0)`` so an idle workload shows 0 instead of no data.
Alerts must not: a comparison binds tighter than ``or``, so ``(x) or vector(0) > t`` is
``x or (vector(0) > t)`` and returns ``x`` whatever its value. Alerts compare the bare ratio
(``*_ratio(..., idle_zero=False)``), which has no value, and so cannot fire, when idle.
"""

from __future__ import annotations

WINDOW = "2m"
#: A series every Triton pod exports from start, whatever models it loaded (CPU metrics are on
#: by default on Linux, GPU or not): its absence means the scrape is broken, not that it is idle.
LIVENESS_METRIC = "nv_cpu_utilization"


def selector(namespace: str, job: str) -> str:
    """The label matcher for one workload's series."""
    return f'{{namespace="{namespace}",job="{job}"}}'


def _idle_zero(expr: str, idle_zero: bool) -> str:
    return f"({expr}) or vector(0)" if idle_zero else expr


def queue_compute_ratio(
    namespace: str, job: str, window: str = WINDOW, *, idle_zero: bool = True
) -> str:
    """Time requests wait in Triton's queues per unit of compute time, over all models and pods.

    Average queue time alone under-reports when several models share the GPU (idle models
    dilute it); the ratio grows as soon as any model waits longer than it computes. An idle
    workload reads 0 (no series, or no compute); with ``idle_zero=False`` no series is no value.
    """
    sel = selector(namespace, job)
    queue = f"sum(rate(nv_inference_queue_duration_us{sel}[{window}]))"
    compute = f"sum(rate(nv_inference_compute_infer_duration_us{sel}[{window}]))"
    return _idle_zero(f"({queue}) / clamp_min({compute}, 1)", idle_zero)


def request_rate(namespace: str, job: str, window: str = WINDOW) -> str:
    """Successful inferences per second."""
    return f"sum(rate(nv_inference_request_success{selector(namespace, job)}[{window}]))"


def error_ratio(namespace: str, job: str, window: str = WINDOW, *, idle_zero: bool = True) -> str:
    """Failed requests over all requests (0 when idle; no value without series and idle_zero)."""
    sel = selector(namespace, job)
    failed = f"sum(rate(nv_inference_request_failure{sel}[{window}]))"
    ok = f"sum(rate(nv_inference_request_success{sel}[{window}]))"
    return _idle_zero(f"({failed}) / clamp_min(({failed}) + ({ok}), 1e-9)", idle_zero)


def p99_latency_ms(namespace: str, job: str) -> str:
    """The worst pod's p99 end-to-end request latency in ms (Triton's summary quantiles)."""
    sel = selector(namespace, job)[:-1] + ',quantile="0.99"}'
    return f"max(nv_inference_request_summary_us{sel}) / 1000"


def gpu_utilization(namespace: str, job: str) -> str:
    """Mean GPU utilisation (0..1) over the workload's GPUs."""
    return f"avg(nv_gpu_utilization{selector(namespace, job)})"


def replicas(namespace: str, job: str) -> str:
    """Pods currently scraped (serving) for the workload."""
    return f"count(count by (pod) ({LIVENESS_METRIC}{selector(namespace, job)}))"


def series_absent(namespace: str, job: str) -> str:
    """1 when the workload has no Triton series at all (nothing scraped), else no value."""
    return f"absent({LIVENESS_METRIC}{selector(namespace, job)})"


#: the unit of each figure, by title
UNITS = {
    "Requests / s": "req/s",
    "p99 latency (ms)": "ms",
    "Queue / compute ratio": "ratio",
    "Error ratio": "ratio",
    "GPU utilization": "fraction",
    "Replicas": "pods",
}


def figures(namespace: str, job: str, window: str = WINDOW) -> dict[str, str]:
    """Dashboard figures by title, in display order (rates over ``window``)."""
    return {
        "Requests / s": request_rate(namespace, job, window),
        "p99 latency (ms)": p99_latency_ms(namespace, job),
        "Queue / compute ratio": queue_compute_ratio(namespace, job, window),
        "Error ratio": error_ratio(namespace, job, window),
        "GPU utilization": gpu_utilization(namespace, job),
        "Replicas": replicas(namespace, job),
    }
