"""The figures SageMaker puts in CloudWatch for a multi-model endpoint, kept by the front.

Same names and units as SageMaker (times in microseconds). ``ModelCacheHit`` is what SageMaker
reports: one sample per request, 1 when the model was already loaded and 0 otherwise, so its
average is the hit ratio. Exported as a JSON snapshot for ``tdk local status`` and, through
``prometheus_client``, as Prometheus text for ``GET /metrics``. Per-TargetModel labels exist only
for the release's models: an unknown TargetModel is counted in the endpoint-wide totals only, so
no request can grow ``/metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)

COUNTERS = (
    "Invocations",
    "Invocation4XXErrors",
    "Invocation5XXErrors",
    "ModelLoadFailures",
    "ModelUnloads",
    "ModelEvictions",
)
TIMERS = (
    "ModelLatency",
    "OverheadLatency",
    "ModelLoadingWaitTime",
    "ModelDownloadingTime",
    "ModelLoadingTime",
    "ModelUnloadingTime",
)
QUANTILES = (0.5, 0.9, 0.99)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SAMPLES = 4096  # recent observations kept per timer for percentiles


@dataclass
class Timer:
    """Count, sum, max and a window of recent samples (microseconds)."""

    count: int = 0
    total: float = 0.0
    maximum: float = 0.0
    recent: list[float] = field(default_factory=list)

    def observe(self, micros: float) -> None:
        self.count += 1
        self.total += micros
        self.maximum = max(self.maximum, micros)
        if len(self.recent) >= _SAMPLES:
            del self.recent[: _SAMPLES // 2]
        self.recent.append(micros)

    def percentile(self, q: float) -> float:
        if not self.recent:
            return 0.0
        ordered = sorted(self.recent)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> dict[str, float]:
        return {
            "count": self.count,
            "avg": self.total / self.count if self.count else 0.0,
            "p50": self.percentile(0.5),
            "p99": self.percentile(0.99),
            "max": self.maximum,
        }


@dataclass
class CacheHits:
    """SageMaker's ModelCacheHit: one 0/1 sample per request; the average is the ratio."""

    hits: int = 0
    samples: int = 0

    def record(self, hit: bool) -> None:
        self.samples += 1
        self.hits += int(hit)

    @property
    def ratio(self) -> float:
        return self.hits / self.samples if self.samples else 0.0


@dataclass
class Metrics:
    """Endpoint-wide counters and timers, plus per-TargetModel counts for ``known`` models."""

    known: frozenset[str] = frozenset()
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    timers: dict[str, Timer] = field(default_factory=lambda: {name: Timer() for name in TIMERS})
    cache: CacheHits = field(default_factory=CacheHits)
    per_model: dict[str, dict[str, int]] = field(default_factory=dict)
    #: per TargetModel: timer name -> [count, total microseconds] (load-path timers only)
    per_model_timers: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    #: per TargetModel: [cache hits, lookups] (SageMaker's ModelCacheHit per model)
    per_model_cache: dict[str, list[int]] = field(default_factory=dict)
    #: requests the front holds now (waiting for a load or in Triton): KEDA's pending requests
    pending: int = 0

    def count(self, name: str, target_model: str | None = None, amount: int = 1) -> None:
        self.counters[name] += amount
        if target_model is not None and target_model in self.known:
            values = self.per_model.setdefault(target_model, {})
            values[name] = values.get(name, 0) + amount

    def cache_lookup(self, hit: bool, target_model: str | None = None) -> None:
        self.cache.record(hit)
        if target_model is not None and target_model in self.known:
            counts = self.per_model_cache.setdefault(target_model, [0, 0])
            counts[0] += int(hit)
            counts[1] += 1

    def observe(self, name: str, seconds: float, target_model: str | None = None) -> None:
        self.timers[name].observe(seconds * 1e6)
        if target_model is not None and target_model in self.known:
            timer = self.per_model_timers.setdefault(target_model, {}).setdefault(name, [0, 0.0])
            timer[0] += 1
            timer[1] += seconds * 1e6

    def snapshot(self, loaded: int) -> dict[str, Any]:
        """SageMaker-named figures: counts, the cache-hit ratio, timer summaries (µs)."""
        figures: dict[str, Any] = {"LoadedModelCount": loaded}
        figures.update(self.counters)
        figures["ModelCacheHit"] = self.cache.ratio
        figures["ModelCacheHitSamples"] = self.cache.samples
        figures.update({name: timer.summary() for name, timer in self.timers.items()})
        figures["PerTargetModel"] = {
            name: dict(values) for name, values in sorted(self.per_model.items())
        }
        return figures

    def prometheus(
        self, loaded: Callable[[], int], loaded_models: Callable[[], Iterable[str]] = tuple
    ) -> bytes:
        """Prometheus text exposition of the current figures (``prometheus_client``)."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self, loaded, loaded_models))
        return generate_latest(registry)


class _Collector:
    """Reads ``Metrics`` at scrape time (nothing is recorded twice)."""

    def __init__(
        self,
        metrics: Metrics,
        loaded: Callable[[], int],
        loaded_models: Callable[[], Iterable[str]],
    ) -> None:
        self.metrics = metrics
        self.loaded = loaded
        self.loaded_models = loaded_models

    def collect(self) -> Iterator[Metric]:
        metrics = self.metrics
        yield GaugeMetricFamily(
            "tdk_loaded_model_count",
            "Models loaded in Triton (SageMaker LoadedModelCount).",
            value=self.loaded(),
        )
        yield GaugeMetricFamily(
            "tdk_pending_requests",
            "Requests the front holds now: waiting for a load or in Triton (KEDA scales on it).",
            value=metrics.pending,
        )
        yield from _per_model(metrics, self.loaded_models())
        for name in COUNTERS:
            snake = _snake(name)
            yield CounterMetricFamily(
                f"tdk_{snake}", f"SageMaker {name}.", value=metrics.counters[name]
            )
            per_model = CounterMetricFamily(
                f"tdk_target_model_{snake}",
                f"SageMaker {name} per TargetModel of the release.",
                labels=["target_model"],
            )
            for target, values in sorted(metrics.per_model.items()):
                if name in values:
                    per_model.add_metric([target], values[name])
            yield per_model
        yield SummaryMetricFamily(
            "tdk_model_cache_hit",
            "SageMaker ModelCacheHit: 1 per request whose model was loaded; average = ratio.",
            count_value=metrics.cache.samples,
            sum_value=metrics.cache.hits,
        )
        yield from _timers(metrics.timers.items())


def _timers(timers: Iterable[tuple[str, Timer]]) -> Iterator[Metric]:
    for name, timer in timers:
        metric = f"tdk_{_snake(name)}_microseconds"
        family = SummaryMetricFamily(
            metric, f"SageMaker {name}.", count_value=timer.count, sum_value=timer.total
        )
        for q in QUANTILES:
            family.add_sample(metric, {"quantile": str(q)}, timer.percentile(q))
        yield family


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", name).lower()


def _per_model(metrics: Metrics, loaded: Iterable[str]) -> Iterator[Metric]:
    """SageMaker's multi-model figures per TargetModel: loaded (1), cache hits over lookups,
    and the load-path timers' count and sum (quantiles stay endpoint-wide: 1,000 copies)."""
    gauge = GaugeMetricFamily(
        "tdk_target_model_loaded",
        "1 while the TargetModel is loaded (SageMaker LoadedModelCount per model).",
        labels=["target_model"],
    )
    for target in sorted(loaded):
        gauge.add_metric([target], 1)
    yield gauge
    hits = SummaryMetricFamily(
        "tdk_target_model_model_cache_hit",
        "SageMaker ModelCacheHit per TargetModel: count = lookups, sum = hits.",
        labels=["target_model"],
    )
    for target, (hit, lookups) in sorted(metrics.per_model_cache.items()):
        hits.add_metric([target], count_value=lookups, sum_value=hit)
    yield hits
    for name in TIMERS[2:]:  # the load path: wait, download, load, unload
        family = SummaryMetricFamily(
            f"tdk_target_model_{_snake(name)}_microseconds",
            f"SageMaker {name} per TargetModel (count and sum).",
            labels=["target_model"],
        )
        for target, timers in sorted(metrics.per_model_timers.items()):
            if name in timers:
                count, total = timers[name]
                family.add_metric([target], count_value=int(count), sum_value=total)
        yield family
