"""What one serving unit sustains, read from ``tdk bench --json`` or ``tdk tune --json``.

A serving unit is what the measurement ran on: one SageMaker instance, one GPU pod, or the
local Triton for a tune. Its capacity is the highest throughput whose p99 met the SLO.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol, TypeVar

from infra.planning.report import MIN_RATE
from tdk import bounded
from tdk.errors import UsageError
from tdk.numbers import check_number, decimal_of

MAX_FIGURE = 1e12  # a measured rate, latency or count beyond this is no measurement


@dataclass(frozen=True)
class Level:
    """One measured load level."""

    concurrency: Decimal
    throughput_rps: Decimal
    p50_ms: Decimal
    p90_ms: Decimal
    p99_ms: Decimal
    errors: int

    @property
    def latency_ms(self) -> Decimal:
        return self.p99_ms

    @property
    def rate(self) -> Decimal:
        return self.throughput_rps


@dataclass(frozen=True)
class Measurement:
    """A measured serving unit: where it ran and its load levels."""

    source: str
    kind: str  # "bench" or "tune"
    target: str  # "local", "sagemaker", "k8s"
    instance_type: str | None
    gpu: str | None
    target_model: str
    levels: tuple[Level, ...]
    slo_ms: Decimal | None  # tune: its latency budget
    batch: int = 1  # inferences per request the levels were measured with

    def capacity(self, slo_ms: Decimal | None) -> Level:
        """The highest-throughput error-free level with p99 <= the SLO."""
        return usable(self.source, self.levels, slo_ms if slo_ms is not None else self.slo_ms)


class Measured(Protocol):
    """A measured load level as the plan picks it: its failed requests, the latency statistic
    the budget applies to (None: not measured) and the rate the plan scales by."""

    @property
    def errors(self) -> int: ...

    @property
    def latency_ms(self) -> Decimal | None: ...

    @property
    def rate(self) -> Decimal: ...


M = TypeVar("M", bound=Measured)


def usable(source: str, levels: Sequence[M], slo: Decimal | None, stat: str = "p99") -> M:
    """The highest-rate error-free level whose ``stat`` is within ``slo`` (ms): the one check
    ``tdk plan`` applies to request and token measurements alike."""
    if slo is None:
        raise UsageError(
            f"{source}: a bench measurement needs --latency-budget-ms to pick the usable level",
            hint=f"e.g. --latency-budget-ms 100 (the {stat} your service must meet)",
        )
    fits = [
        lv
        for lv in levels
        if lv.errors == 0
        and lv.latency_ms is not None
        and lv.latency_ms <= slo
        and lv.rate >= Decimal(MIN_RATE)
    ]
    if not fits:
        raise UsageError(
            f"{source}: no measured level has {stat} <= {slo} ms (error-free)",
            hint="bench at lower concurrency, or raise --latency-budget-ms",
        )
    return max(fits, key=lambda lv: (lv.rate, -(lv.latency_ms or Decimal(0))))


def _decimal(value: Any, where: str, low: float = 0, high: float = MAX_FIGURE) -> Decimal:
    """A measured figure: a finite number in range, in ASCII digits when a string."""
    return decimal_of(value, f"{where}:", low, high, hint="re-run tdk bench")


def _level(item: dict[str, Any], where: str) -> Level:
    errors = item.get("errors", 0)
    counts = list(errors.values()) if isinstance(errors, dict) else [errors]
    count = sum(int(check_number(n, f"{where}.errors", 0, 2**53, integer=True)) for n in counts)
    level = item.get("concurrency", item.get("level", 0))
    return Level(
        _decimal(level, f"{where}.concurrency"),
        _decimal(item["throughput_rps"], f"{where}.throughput_rps"),
        _decimal(item["p50_ms"], f"{where}.p50_ms"),
        _decimal(item["p90_ms"], f"{where}.p90_ms"),
        _decimal(item["p99_ms"], f"{where}.p99_ms"),
        count,
    )


def _batch(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{where}: {value!r} is not a batch size", hint="re-run tdk bench")
    return value


MEASUREMENT_MAX_BYTES = 64 * 1024 * 1024  # a tune of thousands of points is a few MB


def read_bench_json(path: Path) -> Any:
    """A ``tdk bench/tune --json`` file, read by the bounded reader (regular file, capped,
    depth-limited, finite numbers); UsageError naming the file otherwise."""
    try:
        return bounded.load_json(
            path, "save `tdk bench --json > FILE` output", limit=MEASUREMENT_MAX_BYTES
        )
    except bounded.DocumentError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None


def load_measurement(path: Path) -> Measurement:
    """Parse a ``tdk bench --json`` or ``tdk tune --json`` document."""
    data = read_bench_json(path)
    try:
        if "levels" in data:
            levels = [_level(item, f"{path}: levels[{i}]") for i, item in enumerate(data["levels"])]
            return Measurement(
                str(path),
                "bench",
                str(data["target"]),
                data.get("instance_type"),
                data.get("gpu"),
                str(data["target_model"]),
                tuple(levels),
                None,
                _batch(data.get("batch", 1), f"{path}: batch"),
            )
        points = [_level(item, f"{path}: points[{i}]") for i, item in enumerate(data["points"])]
        return Measurement(
            str(path),
            "tune",
            str(data.get("target", "local")),
            data.get("instance_type"),
            data.get("gpu"),
            str(data["model"]),
            tuple(points),
            _decimal(data["latency_budget_ms"], f"{path}: latency_budget_ms"),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{path} is not a tdk bench/tune measurement (missing {exc})",
            hint="give the output of `tdk bench --json` or `tdk tune --json`",
        ) from exc
