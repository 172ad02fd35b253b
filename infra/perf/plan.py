"""``tdk plan``: serving units, instances and dollars for a traffic profile (exact arithmetic).

A unit sustains ``unit_rps`` within the SLO; the autoscaler keeps each unit at ``safety``
of that (AWS's target-tracking guidance starts at 0.5), so ``rps`` needs
``max(1, ceil(rps / (unit_rps * safety)))`` units and ``ceil(units / units_per_instance)``
instances. Counts come from Decimal division and ceilings, never from summed floats. Each
traffic row is one equal interval: the average cost is the mean of the rows' costs.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from pathlib import Path

from tdk.errors import UsageError

MILLION = Decimal(1_000_000)
#: the largest traffic plan accepts: far above any fleet, small enough for exact arithmetic
MAX_RPS = Decimal("1e12")
SECONDS_PER_HOUR = Decimal(3600)


@dataclass(frozen=True)
class Sample:
    """One row of the traffic profile."""

    time: str
    rps: Decimal


@dataclass(frozen=True)
class Candidate:
    """One way to buy serving units: an instance type (or GPU node) and its hourly price."""

    name: str
    unit_rps: Decimal  # what one unit sustains within the SLO
    units_per_instance: int
    usd_per_hour: Decimal
    measured: bool = True  # False: the unit rate was assumed from another measurement
    baseline: bool = False


def ceil_div(numerator: Decimal, denominator: Decimal) -> int:
    """``ceil(numerator / denominator)`` for Decimals, exactly."""
    return int((numerator / denominator).to_integral_value(rounding=ROUND_CEILING))


def units_for(rps: Decimal, unit_rps: Decimal, safety: Decimal) -> int:
    """Serving units needed for ``rps`` when each runs at ``safety`` of its capacity (>= 1)."""
    return max(1, ceil_div(rps, unit_rps * safety))


@dataclass
class Option:
    """A candidate costed over the traffic profile."""

    candidate: Candidate
    units: list[int] = field(default_factory=list)  # per traffic row
    instances: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.candidate.name

    @property
    def baseline(self) -> bool:
        return self.candidate.baseline

    @property
    def cost_per_hour_series(self) -> list[Decimal]:
        return [n * self.candidate.usd_per_hour for n in self.instances]

    @property
    def average_cost_per_hour(self) -> Decimal:
        series = self.cost_per_hour_series
        return sum(series, Decimal(0)) / len(series)


@dataclass
class PlanReport:
    """Every option over one traffic profile."""

    traffic: list[Sample]
    peak: Sample
    trough: Sample
    safety: Decimal
    price_date: str
    options: list[Option]

    @property
    def average_rps(self) -> Decimal:
        return sum((s.rps for s in self.traffic), Decimal(0)) / len(self.traffic)

    def per_million(self, option: Option) -> Decimal:
        """Dollars per million inferences at the profile's average traffic."""
        served = self.average_rps * SECONDS_PER_HOUR
        if served == 0:
            return Decimal(0)
        return option.average_cost_per_hour / served * MILLION

    def sizing(self, option: Option) -> Sizing:
        """Units and instances at the peak and at the trough."""
        c = option.candidate
        peak = units_for(self.peak.rps, c.unit_rps, self.safety)
        trough = units_for(self.trough.rps, c.unit_rps, self.safety)
        per = c.units_per_instance
        return Sizing(peak, trough, -(-peak // per), -(-trough // per))

    def peak_cost(self, option: Option) -> Decimal:
        return self.sizing(option).peak_instances * option.candidate.usd_per_hour

    def row(self, option: Option) -> dict[str, object]:
        c, size = option.candidate, self.sizing(option)
        return {
            "name": c.name,
            "baseline": c.baseline,
            "unit_rps": str(c.unit_rps),
            "unit_rps_measured": c.measured,
            "units_per_instance": c.units_per_instance,
            "usd_per_hour_each": str(c.usd_per_hour),
            "peak_units": size.peak_units,
            "trough_units": size.trough_units,
            "peak_instances": size.peak_instances,
            "trough_instances": size.trough_instances,
            "peak_usd_per_hour": str(_cents(self.peak_cost(option))),
            "average_usd_per_hour": str(_cents(option.average_cost_per_hour)),
            "usd_per_million": str(_cents(self.per_million(option), "0.0001")),
        }


@dataclass(frozen=True)
class Sizing:
    peak_units: int
    trough_units: int
    peak_instances: int
    trough_instances: int


def _cents(value: Decimal, quantum: str = "0.01") -> Decimal:
    return value.quantize(Decimal(quantum))


def plan(
    traffic: list[Sample],
    peak_rps: Decimal | None,
    candidates: list[Candidate],
    safety: Decimal,
    price_date: str,
) -> PlanReport:
    """Cost every candidate over ``traffic`` (constant at ``peak_rps`` when empty)."""
    if not traffic and peak_rps is None:
        raise UsageError("no traffic given", hint="pass --peak-rps N and/or --traffic FILE")
    if not Decimal(0) < safety <= Decimal(1):
        raise UsageError(f"--safety-factor {safety}: expected 0 < f <= 1", hint="AWS starts at 0.5")
    if peak_rps is not None and peak_rps > MAX_RPS:
        raise UsageError(
            f"--peak-rps {peak_rps}: above the {MAX_RPS:E} inferences/s tdk plan can cost",
            hint="give the peak in inferences per second, e.g. --peak-rps 2500",
        )
    profile = traffic or [Sample("peak", peak_rps or Decimal(0))]
    peak = max(profile, key=lambda s: s.rps)
    if peak_rps is not None:
        peak = Sample("--peak-rps", peak_rps)
    trough = min(profile, key=lambda s: s.rps) if traffic else Sample("idle", Decimal(0))
    options = []
    for candidate in candidates:
        if candidate.unit_rps <= 0 or candidate.units_per_instance < 1:
            raise UsageError(
                f"{candidate.name}: a serving unit must sustain > 0 rps", hint="check the input"
            )
        units = [units_for(s.rps, candidate.unit_rps, safety) for s in profile]
        instances = [-(-u // candidate.units_per_instance) for u in units]
        options.append(Option(candidate, units, instances))
    return PlanReport(profile, peak, trough, safety, price_date, options)


def invocations_per_instance(unit_rps: Decimal, safety: Decimal) -> int:
    """SageMakerVariantInvocationsPerInstance = MAX_RPS * SAFETY_FACTOR * 60 (per minute)."""
    return int((unit_rps * safety * 60).to_integral_value(rounding=ROUND_FLOOR))


def read_traffic(path: Path) -> list[Sample]:
    """A CSV of ``time,rps`` rows (a header row is allowed); one row per equal interval."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}", hint="check --traffic") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--traffic {path} is not UTF-8 text ({exc.reason})", "save it as UTF-8 CSV"
        ) from None
    samples: list[Sample] = []
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2:
            raise UsageError(
                f"{path}:{number}: expected 2 columns (time,rps), got {len(row)}",
                hint="one row per interval, e.g. 00:00,120",
            )
        try:
            rps = Decimal(row[1].strip())
        except InvalidOperation:
            if number == 1:  # header
                continue
            raise UsageError(
                f"{path}:{number}: rps {row[1]!r} is not a number", hint="e.g. 00:00,120"
            ) from None
        if not rps.is_finite() or rps < 0 or rps > MAX_RPS:
            raise UsageError(
                f"{path}:{number}: rps {row[1]!r} must be between 0 and {MAX_RPS:E}",
                hint="fix the row",
            )
        samples.append(Sample(row[0].strip(), rps))
    if not samples:
        raise UsageError(f"{path}: no traffic rows", hint="rows of time,rps")
    return samples
