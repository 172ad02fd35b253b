"""The options ``tdk plan`` compares, priced from the table: one per instance type or node
shape of the target (its plan port prices it), plus the baseline the user runs today.

The target's plan port comes in as a parameter (``Pricer``: what of a
``infra.targets.ports.PlanPort`` this module asks), so the planner never imports the
targets."""

from __future__ import annotations

from decimal import Decimal
from typing import Protocol

from infra.planning.pricing import PriceTable, Quote
from infra.planning.report import MAX_PRICE, MAX_RATE, MIN_RATE, Candidate
from tdk.errors import UsageError
from tdk.numbers import decimal_of


class Pricer(Protocol):
    """What ``tdk plan`` asks a target's plan port: its default candidates, which measured units
    are its kinds, and the price of one quoted unit."""

    @property
    def default_candidates(self) -> tuple[str, ...]: ...

    def owns(self, unit: str) -> bool: ...

    def matches(self, spec: str, measured_on: str | None) -> bool: ...

    def candidate(self, quote: Quote) -> Candidate: ...


def _number(text: str, what: str, hint: str, most: float = MAX_RATE) -> Decimal:
    """A rate (or, with ``most`` MAX_PRICE, a price) of ``--baseline``, in ASCII digits."""
    return decimal_of(text, f"{what}:", MIN_RATE, most, hint=hint)


def defaults(entry: Pricer, measured_on: str | None) -> list[str]:
    """The candidates ``tdk plan`` compares by default: the target's, led by the measured unit
    when it is one of the target's kinds."""
    found = list(entry.default_candidates)
    if measured_on and entry.owns(measured_on):
        found.insert(0, measured_on)
    return found


def candidate(
    entry: Pricer,
    spec: str,
    region: str,
    prices: PriceTable,
    measured_rps: Decimal,
    measured_on: str | None,
    gpus_per_node: int = 1,
) -> Candidate:
    """``TYPE`` or ``TYPE:RPS`` (RPS: what one unit of that type sustains, if measured)."""
    name, _, rate = spec.partition(":")
    hint = f"e.g. --instance-type {name} or --instance-type {name}:420"  # the target's unit
    unit_rps = _number(rate, f"--instance-type {spec}", hint) if rate else measured_rps
    measured = bool(rate) or entry.matches(name, measured_on)
    return entry.candidate(Quote(name, unit_rps, measured, region, prices, gpus_per_node))


def baseline(spec: str, region: str, prices: PriceTable) -> Candidate:
    """``TYPE:RPSrps[:USD_PER_HOUR]``, e.g. ``inf2.xlarge:2756rps:0.76`` (price from the table
    when omitted: the section that lists TYPE in ``region``)."""
    parts = spec.split(":")
    hint = 'e.g. --baseline "inf2.xlarge:2756rps:0.76" (type, rps per instance, $/h)'
    if len(parts) not in (2, 3) or not parts[0] or not parts[1].endswith("rps"):
        raise UsageError(f"--baseline {spec!r}: expected TYPE:RPSrps[:USD_PER_HOUR]", hint=hint)
    name = parts[0]
    rps = _number(parts[1].removesuffix("rps"), f"--baseline {spec}", hint)
    if len(parts) == 3:
        price = _number(parts[2], f"--baseline {spec}", hint, MAX_PRICE)
    else:
        price = prices.find(region, name).usd_per_hour
    return Candidate(f"{name} (baseline)", rps, 1, price, measured=True, baseline=True)
