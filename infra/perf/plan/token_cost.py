"""Cost per million output tokens, from a ``tdk bench generate --json`` measurement.

One serving unit's output tokens per second (measured, as AIPerf defines output token
throughput) and its hourly price (the bundled or given price table) give the cost of a million
output tokens when the unit runs at ``--safety-factor`` of that rate, the utilisation the request
plan sizes units at (0.5 by default): ``usd_per_hour / (tokens_per_s * safety * 3600) * 1e6``.
The Inferentia baseline is given like ``--baseline`` for requests, with tokens/s instead of
rps: published Neuron figures are per model and instance (e.g. Hugging Face optimum-neuron's
benchmark pages), so the user names the figure and its source; the kit bundles none.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from infra.planning.pricing import PriceTable
from infra.planning.report import (
    MAX_PRICE,
    MAX_RATE,
    MIN_RATE,
    SECONDS_PER_HOUR,
    Candidate,
    Sample,
    check_safety,
)
from tdk.errors import UsageError
from tdk.numbers import decimal_of

MILLION = Decimal(1_000_000)
TOKEN_RATE_SUFFIX = "tok/s"


@dataclass(frozen=True)
class TokenRow:
    """One option priced per million output tokens, and where its numbers come from."""

    name: str
    usd_per_hour: Decimal
    output_tokens_per_s: Decimal
    usd_per_million_tokens: Decimal
    source: str
    baseline: bool = False
    utilisation: Decimal = Decimal(1)
    usd_per_million_total_tokens: Decimal | None = None  # input and output tokens together

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "usd_per_hour": str(self.usd_per_hour),
            "output_tokens_per_s": str(self.output_tokens_per_s),
            "usd_per_million_output_tokens": str(self.usd_per_million_tokens),
            "utilisation": str(self.utilisation),
            "usd_per_million_input_and_output_tokens": None
            if self.usd_per_million_total_tokens is None
            else str(self.usd_per_million_total_tokens),
            "source": self.source,
            "baseline": self.baseline,
        }


def per_million(usd_per_hour: Decimal, tokens_per_s: Decimal) -> Decimal:
    """US dollars per million output tokens for a unit at ``tokens_per_s``."""
    cost = usd_per_hour / (tokens_per_s * SECONDS_PER_HOUR) * MILLION
    return cost.quantize(Decimal("0.0001"))


def row(
    candidate: Candidate, source: str, safety: Decimal, input_ratio: Decimal | None = None
) -> TokenRow:
    """A priced candidate (its ``unit_rps`` holds output tokens/s per serving unit), run at
    ``safety`` of that rate (``check_safety``: the request plan's utilisation)."""
    rate = candidate.unit_rps * candidate.units_per_instance
    return TokenRow(
        candidate.name,
        candidate.usd_per_hour,
        rate,
        per_million(candidate.usd_per_hour, rate * check_safety(safety)),
        source,
        candidate.baseline,
        safety,
        None
        if input_ratio is None
        else per_million(candidate.usd_per_hour, rate * safety * (1 + input_ratio)),
    )


def baseline_candidate(spec: str, region: str, prices: PriceTable) -> tuple[Candidate, str]:
    """``TYPE:RATEtok/s[:USD_PER_HOUR]``, e.g. ``inf2.xlarge:310tok/s:0.76``: what one instance
    of TYPE generates, from a published Neuron figure for the model (price from the table's
    section that lists TYPE when omitted); the candidate (its ``unit_rps`` in output tokens/s) and
    where its numbers come from."""
    parts = spec.split(":")
    hint = 'e.g. --baseline "inf2.xlarge:310tok/s:0.76" (type, output tokens/s, $/h)'
    if len(parts) not in (2, 3) or not parts[0] or not parts[1].endswith(TOKEN_RATE_SUFFIX):
        raise UsageError(f"--baseline {spec!r}: expected TYPE:RATEtok/s[:USD_PER_HOUR]", hint=hint)
    name = parts[0]
    rate = _positive(parts[1].removesuffix(TOKEN_RATE_SUFFIX), spec, hint)
    if len(parts) == 3:
        price, where = _positive(parts[2], spec, hint, MAX_PRICE), "price given"
    else:
        found = prices.find(region, name)
        price, where = found.usd_per_hour, f"price {found.source} ({prices.date})"
    source = f"--baseline: {rate} tok/s as given (a published figure for the model), {where}"
    return Candidate(f"{name} (baseline)", rate, 1, price, measured=True, baseline=True), source


def baseline(spec: str, region: str, prices: PriceTable, safety: Decimal) -> TokenRow:
    """The ``--baseline`` priced per million output tokens at ``safety`` of its rate."""
    candidate, source = baseline_candidate(spec, region, prices)
    return row(candidate, source, safety)


def in_tokens(traffic: list[Sample], tokens_per_request: Decimal) -> list[Sample]:
    """A requests/s traffic profile (``--traffic``) as output tokens/s at the measured
    sequence lengths, so the request planner sizes token units with the same arithmetic."""
    return [Sample(s.time, s.rps * tokens_per_request) for s in traffic]


def _positive(text: str, spec: str, hint: str, most: float = MAX_RATE) -> Decimal:
    """A rate (or, with ``most`` MAX_PRICE, a price) of ``--baseline``, in ASCII digits."""
    return decimal_of(text, f"--baseline {spec}:", MIN_RATE, most, hint=hint)
