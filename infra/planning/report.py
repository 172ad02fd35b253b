"""What ``tdk plan`` computes with, shared by the planner (``infra.perf.plan``) and the targets'
entries that price candidates and size stacks: a traffic row, a candidate, a costed option, the
report, and the exact Decimal arithmetic they use (counts from divisions and ceilings, never
from summed floats).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from tdk.errors import UsageError

MILLION = Decimal(1_000_000)
SECONDS_PER_HOUR = Decimal(3600)
# The rates and prices the exact arithmetic takes: outside them a quantize to cents needs more
# than Decimal's 28 digits (a rate of 1e-308 tok/s was decimal.InvalidOperation).
MIN_RATE = 0.001  # requests or output tokens per second of a unit
MAX_RATE = 1e9
MAX_PRICE = 1e6  # US dollars per hour of an instance


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


def check_safety(safety: Decimal) -> Decimal:
    """``--safety-factor``: the share of a unit's capacity the plan runs it at, for requests and
    output tokens alike (0 < f <= 1; AWS's target tracking starts at 0.5)."""
    if not Decimal(0) < safety <= Decimal(1):
        raise UsageError(f"--safety-factor {safety}: expected 0 < f <= 1", hint="AWS starts at 0.5")
    return safety


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


def invocations_per_instance(unit_rps: Decimal, safety: Decimal) -> int:
    """SageMakerVariantInvocationsPerInstance = MAX_RPS * SAFETY_FACTOR * 60 (per minute)."""
    return int((unit_rps * safety * 60).to_integral_value(rounding=ROUND_FLOOR))
