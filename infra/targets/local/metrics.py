"""The figures SageMaker puts in CloudWatch for a multi-model endpoint, kept by the front.

Same names and units as SageMaker (times in microseconds); exported as a JSON snapshot for
``tdk local status`` and as Prometheus text for ``GET /metrics``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

COUNTERS = (
    "Invocations",
    "ModelCacheHit",
    "Invocation4XXErrors",
    "Invocation5XXErrors",
    "ModelLoadFailures",
    "ModelUnloads",
)
TIMERS = (
    "ModelLatency",
    "OverheadLatency",
    "ModelLoadingWaitTime",
    "ModelDownloadingTime",
    "ModelLoadingTime",
    "ModelUnloadingTime",
)
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
class Metrics:
    """Endpoint-wide counters and timers, plus per-TargetModel invocation counts."""

    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    timers: dict[str, Timer] = field(default_factory=lambda: {name: Timer() for name in TIMERS})
    per_model: dict[str, dict[str, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )

    def count(self, name: str, target_model: str | None = None, amount: int = 1) -> None:
        self.counters[name] += amount
        if target_model is not None:
            self.per_model[target_model][name] += amount

    def observe(self, name: str, seconds: float) -> None:
        self.timers[name].observe(seconds * 1e6)

    def snapshot(self, loaded: int) -> dict[str, Any]:
        """SageMaker-named figures: counters as integers, timers as summaries in microseconds."""
        figures: dict[str, Any] = {"LoadedModelCount": loaded}
        figures.update(self.counters)
        figures.update({name: timer.summary() for name, timer in self.timers.items()})
        figures["PerTargetModel"] = {
            name: dict(values) for name, values in sorted(self.per_model.items())
        }
        return figures

    def prometheus(self, loaded: int) -> str:
        """Prometheus text exposition (version 0.0.4)."""
        lines = [
            "# HELP tdk_loaded_model_count Models loaded in Triton (SageMaker LoadedModelCount).",
            "# TYPE tdk_loaded_model_count gauge",
            f"tdk_loaded_model_count {loaded}",
        ]
        for name, value in self.counters.items():
            metric = f"tdk_{_snake(name)}_total"
            lines += [f"# HELP {metric} SageMaker {name}.", f"# TYPE {metric} counter"]
            lines.append(f"{metric} {value}")
            for target, values in sorted(self.per_model.items()):
                if name in values:
                    lines.append(f'{metric}{{target_model="{_escape(target)}"}} {values[name]}')
        for name, timer in self.timers.items():
            metric = f"tdk_{_snake(name)}_microseconds"
            lines += [f"# HELP {metric} SageMaker {name}.", f"# TYPE {metric} summary"]
            for q in (0.5, 0.9, 0.99):
                lines.append(f'{metric}{{quantile="{q}"}} {timer.percentile(q):.1f}')
            lines.append(f"{metric}_sum {timer.total:.1f}")
            lines.append(f"{metric}_count {timer.count}")
        return "\n".join(lines) + "\n"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", name).lower()


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
