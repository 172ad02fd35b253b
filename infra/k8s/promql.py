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

from dataclasses import dataclass

from packager.engines import TENSORRT_LLM, VLLM

WINDOW = "2m"
#: ``.`` escaped in a PromQL regex written inside a double-quoted PromQL string
ESCAPED_DOT = "\\\\."
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


def p99_latency_ms(namespace: str, job: str, streamed: tuple[str, ...] = ()) -> str:
    """The worst pod's p99 end-to-end request latency in ms (Triton's summary quantiles),
    leaving out the ``streamed`` models (a generation's whole length is no request latency)."""
    sel = selector(namespace, job)[:-1] + ',quantile="0.99"'
    if streamed:  # a "." in a model name is a regex wildcard: escaped (PromQL string "\\.")
        names = "|".join(name.replace(".", ESCAPED_DOT) for name in streamed)
        sel += f',model!~"{names}"'
    return f"max(nv_inference_request_summary_us{sel}}}) / 1000"


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


# -- LLM engines ---------------------------------------------------------------------------
# vLLM and TensorRT-LLM take every request at once and schedule internally, so Triton's queue
# time (and the queue/compute ratio) reads near zero in front of them; they are scaled on their
# own metrics as Triton's /metrics exports them. Checked 2026-11-26:
# - vLLM backend (main, 25.12; model parameter REPORT_CUSTOM_METRICS on), src/utils/metrics.py
#   of github.com/triton-inference-server/vllm_backend: counters and histograms only
#   (``vllm:e2e_request_latency_seconds``, ``vllm:time_to_first_token_seconds``, token counts).
#   It exports no waiting-requests or KV-cache gauge (those were in an unmerged branch), so
#   vLLM is scaled on requests in flight by Little's law (rate of the e2e histogram's _sum:
#   arrivals x mean time in the system, running and waiting alike) and on p90 TTFT, which grows
#   as soon as requests wait for the engine;
# - TensorRT-LLM (tensorrtllm_backend README, "Triton Metrics"):
#   ``nv_trt_llm_request_metrics{request_type="waiting"}`` and
#   ``nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"|"max"}`` (tensorrtllm_backend
#   docs; the same names in kubernetes-sigs/gateway-api-inference-extension's guide for Triton
#   TensorRT-LLM);
# - Triton's ``nv_inference_first_response_histogram_ms`` (decoupled models' time to first
#   response; the first chunk, which is the first token for engines that stream one per
#   response), exported with ``--metrics-config=histogram_latencies=true`` (Triton server
#   docs/user_guide/metrics.md and its L0_metrics test). The wheel's Triton 2.51 accepts the
#   flag but exports no such histogram (checked on CPU with the sample ``llm``): where an image
#   lacks it, the TTFT alert has no value and cannot fire.

#: requests in flight per pod above which KEDA adds a vLLM pod (HPA AverageValue)
IN_FLIGHT_PER_POD = 32
#: p90 time to first token (s) above which KEDA adds a vLLM pod (HPA Value)
TTFT_TARGET_S = 0.5
#: TensorRT-LLM requests waiting in its scheduler per pod above which KEDA adds a pod
WAITING_PER_POD = 4
#: KV-cache use (0..1, mean over pods) above which KEDA adds a TensorRT-LLM pod
KV_CACHE_TARGET = 0.8


@dataclass(frozen=True)
class EngineTrigger:
    """One KEDA Prometheus trigger on an engine metric."""

    name: str
    query: str
    metric_type: str  # KEDA's metricType: "AverageValue" (per pod) or "Value"
    threshold: float


def _with(namespace: str, job: str, extra: str) -> str:
    return selector(namespace, job)[:-1] + f",{extra}}}"


def engine_triggers(namespace: str, job: str, engines: tuple[str, ...]) -> list[EngineTrigger]:
    """Waiting-requests and KV-cache triggers for each engine (``packager.engines`` names)."""
    sel = selector(namespace, job)
    triggers: list[EngineTrigger] = []
    if VLLM in engines:
        triggers += [
            EngineTrigger(
                "vllm-in-flight",
                f"(sum(rate(vllm:e2e_request_latency_seconds_sum{sel}[{WINDOW}]))) or vector(0)",
                "AverageValue",
                IN_FLIGHT_PER_POD,
            ),
            EngineTrigger(
                "vllm-ttft",
                # idle: the quantile is NaN, which ``>= 0`` drops, so KEDA reads 0
                "(histogram_quantile(0.9, sum by (le) "
                f"(rate(vllm:time_to_first_token_seconds_bucket{sel}[{WINDOW}]))) >= 0)"
                " or vector(0)",
                "Value",
                TTFT_TARGET_S,
            ),
        ]
    if TENSORRT_LLM in engines:
        used = _with(namespace, job, 'kv_cache_block_type="used"')
        most = _with(namespace, job, 'kv_cache_block_type="max"')
        waiting = _with(namespace, job, 'request_type="waiting"')
        triggers += [
            EngineTrigger(
                "trtllm-waiting",
                f"(sum(nv_trt_llm_request_metrics{waiting})) or vector(0)",
                "AverageValue",
                WAITING_PER_POD,
            ),
            EngineTrigger(
                "trtllm-kv-cache",
                f"(avg(sum by (pod) (nv_trt_llm_kv_cache_block_metrics{used}) / clamp_min("
                f"sum by (pod) (nv_trt_llm_kv_cache_block_metrics{most}), 1))) or vector(0)",
                "Value",
                KV_CACHE_TARGET,
            ),
        ]
    return triggers


def ttft_p99_ms(namespace: str, job: str, window: str = WINDOW) -> str:
    """p99 time to first response (ms) over the workload, from Triton's first-response
    histogram; no value when idle (no observations in the window)."""
    sel = selector(namespace, job)
    return (
        "histogram_quantile(0.99, sum by (le) "
        f"(rate(nv_inference_first_response_histogram_ms_bucket{sel}[{window}])))"
    )


def vllm_e2e_p99_ms(namespace: str, job: str, window: str = WINDOW) -> str:
    """p99 end-to-end request latency (ms) as the vLLM engine measures it."""
    sel = selector(namespace, job)
    return (
        "histogram_quantile(0.99, sum by (le) "
        f"(rate(vllm:e2e_request_latency_seconds_bucket{sel}[{window}]))) * 1000"
    )


def in_flight_triggers(namespace: str, job: str) -> list[EngineTrigger]:
    """For an engine that exports no metrics of its own (TensorRT-LLM's LLM-API Python model
    registers none: triton_backend/all_models/llmapi/tensorrt_llm/1/model.py, read 2026-11-27;
    a vLLM model with REPORT_CUSTOM_METRICS off or disable_log_stats): Triton's own series.
    Requests in flight by Little's law (rate of the cumulative request duration) and requests
    pending in Triton (``nv_inference_pending_request_count``, Triton docs/user_guide/
    metrics.md)."""
    sel = selector(namespace, job)
    return [
        EngineTrigger(
            "triton-in-flight",
            f"(sum(rate(nv_inference_request_duration_us{sel}[{WINDOW}])) / 1e6) or vector(0)",
            "AverageValue",
            IN_FLIGHT_PER_POD,
        ),
        EngineTrigger(
            "triton-pending",
            f"(sum(nv_inference_pending_request_count{sel})) or vector(0)",
            "AverageValue",
            WAITING_PER_POD,
        ),
    ]


# -- k8sModelMode: mme --------------------------------------------------------------------------
# The front exports SageMaker's multi-model figures under their names as ``tdk_*`` series
# (``infra/targets/local/metrics.py``: the same front as ``tdk local``; times in microseconds,
# summaries with 0.5/0.9/0.99 quantiles over recent samples), plus ``tdk_pending_requests``
# (requests the front holds: waiting for a load or in Triton) and ``tdk_model_evictions_total``.

#: requests the fronts hold per pod above which KEDA adds a pod (HPA AverageValue)
PENDING_PER_POD = 8
#: evictions per second per pod above which KEDA adds a pod: the copies in use do not fit the
#: pods' budgets (one eviction every 10 s per pod), so more pods hold more of the working set
EVICTIONS_PER_POD_S = 0.1
#: SageMaker's six multi-model metrics: (title, series, unit); the timers as the worst pod's p99
MULTI_MODEL_TIMERS = (
    ("ModelLoadingWaitTime p99 (ms)", "tdk_model_loading_wait_time_microseconds"),
    ("ModelDownloadingTime p99 (ms)", "tdk_model_downloading_time_microseconds"),
    ("ModelLoadingTime p99 (ms)", "tdk_model_loading_time_microseconds"),
    ("ModelUnloadingTime p99 (ms)", "tdk_model_unloading_time_microseconds"),
)


def pending_requests(namespace: str, job: str) -> str:
    """Requests every front holds now (0 when idle: KEDA's query)."""
    return f"(sum(tdk_pending_requests{selector(namespace, job)})) or vector(0)"


def evictions_per_second(
    namespace: str, job: str, window: str = WINDOW, *, idle_zero: bool = True
) -> str:
    """Models unloaded to make room, per second, over every pod (cache pressure)."""
    expr = f"sum(rate(tdk_model_evictions_total{selector(namespace, job)}[{window}]))"
    return _idle_zero(expr, idle_zero)


def cache_hit_ratio(namespace: str, job: str, window: str = WINDOW) -> str:
    """SageMaker's ModelCacheHit: requests whose model was loaded over all requests (no value
    while idle: a ratio of nothing is not 0)."""
    sel = selector(namespace, job)
    hits = f"sum(rate(tdk_model_cache_hit_sum{sel}[{window}]))"
    lookups = f"sum(rate(tdk_model_cache_hit_count{sel}[{window}]))"
    return f"({hits}) / ({lookups} > 0)"


def loaded_models(namespace: str, job: str) -> str:
    """SageMaker's LoadedModelCount over every pod."""
    return f"sum(tdk_loaded_model_count{selector(namespace, job)})"


def timer_p99_ms(namespace: str, job: str, series: str) -> str:
    """The worst pod's p99 of one of the front's timers, in ms."""
    return f'max({series}{selector(namespace, job)[:-1]},quantile="0.99"}}) / 1000'


def load_failures(namespace: str, job: str, window: str) -> str:
    """Failed loads (download, checksum, Triton's load) over ``window``."""
    sel = selector(namespace, job)
    return f"sum(increase(tdk_model_load_failures_total{sel}[{window}]))"


def multi_model_figures(namespace: str, job: str, window: str = WINDOW) -> dict[str, str]:
    """SageMaker's six multi-model metrics (ModelCacheHit, LoadedModelCount, ModelLoadingWaitTime,
    ModelDownloadingTime, ModelLoadingTime, ModelUnloadingTime) and the two KEDA scales on."""
    figures = {
        "ModelCacheHit": cache_hit_ratio(namespace, job, window),
        "LoadedModelCount": loaded_models(namespace, job),
    }
    figures.update({t: timer_p99_ms(namespace, job, s) for t, s in MULTI_MODEL_TIMERS})
    figures["Pending requests"] = pending_requests(namespace, job)
    figures["Evictions / s"] = evictions_per_second(namespace, job, window)
    return figures


MULTI_MODEL_UNITS = {
    "ModelCacheHit": "ratio",
    "LoadedModelCount": "models",
    **{title: "ms" for title, _ in MULTI_MODEL_TIMERS},
    "Pending requests": "requests",
    "Evictions / s": "1/s",
}


def multi_model_triggers(namespace: str, job: str) -> list[EngineTrigger]:
    """KEDA on the fronts' pending requests and on cache pressure (evictions per second), each
    per pod: the HPA takes the larger pod count."""
    return [
        EngineTrigger(
            "front-pending", pending_requests(namespace, job), "AverageValue", PENDING_PER_POD
        ),
        EngineTrigger(
            "model-evictions",
            evictions_per_second(namespace, job),
            "AverageValue",
            EVICTIONS_PER_POD_S,
        ),
    ]


def dashboard_figures(namespace: str, job: str, multi_model: bool) -> dict[str, str]:
    """What every cloud's dashboard charts: Triton's figures, and SageMaker's six multi-model
    metrics with KEDA's two for an ``mme`` workload."""
    charted = figures(namespace, job)
    return charted | multi_model_figures(namespace, job) if multi_model else charted
