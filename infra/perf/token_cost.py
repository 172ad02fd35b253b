"""Cost per million output tokens, from a ``tdk bench --prompt --json`` measurement.

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
from pathlib import Path
from typing import Any

from infra.perf.measurement import read_bench_json
from infra.planning.pricing import PriceTable
from infra.planning.report import (
    MAX_PRICE,
    MAX_RATE,
    MIN_RATE,
    SECONDS_PER_HOUR,
    Candidate,
    check_safety,
)
from tdk.errors import UsageError
from tdk.numbers import decimal_of

MILLION = Decimal(1_000_000)
TOKEN_RATE_SUFFIX = "tok/s"


@dataclass(frozen=True)
class TokenMeasurement:
    """What ``tdk bench --prompt`` measured on one serving unit."""

    source: str
    target: str
    instance_type: str | None
    gpu: str | None
    model: str
    output_tokens_per_s: Decimal
    offered_rate: float | None = None  # bench --rate: the load it was given, not its capacity

    def load_note(self) -> str | None:
        """Said when the throughput is what an offered rate asked for, not what the unit can
        serve: the cost per token is then at that load (too high if the unit had room)."""
        if self.offered_rate is None:
            return None
        return (
            f"{self.source} was measured at an offered rate of {self.offered_rate:g} requests/s "
            "(bench --rate): its tokens/s are what that load asked for, not what the unit can "
            "serve, so the cost per million tokens is at that load; bench with --concurrency "
            "to price the unit's capacity"
        )


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "usd_per_hour": str(self.usd_per_hour),
            "output_tokens_per_s": str(self.output_tokens_per_s),
            "usd_per_million_output_tokens": str(self.usd_per_million_tokens),
            "utilisation": str(self.utilisation),
            "source": self.source,
            "baseline": self.baseline,
        }


def token_measurement(path: Path, data: Any) -> TokenMeasurement | None:
    """The token measurement in ``data`` (a parsed JSON document), None when it is not one."""
    if not isinstance(data, dict) or "output_tokens_per_s" not in data:
        return None
    hint = "save `tdk bench --prompt ... --instance-type TYPE --json > FILE` again"
    errors = data.get("errors")
    if errors != 0:
        raise UsageError(
            f"{path}: the bench had {errors} failed requests; its throughput is not a capacity",
            hint=hint,
        )
    rate = decimal_of(
        data["output_tokens_per_s"], f"{path}: output_tokens_per_s", MIN_RATE, MAX_RATE, hint=hint
    )
    return TokenMeasurement(
        str(path),
        str(data.get("target", "")),
        data.get("instance_type"),
        data.get("gpu"),
        str(data.get("model", "")),
        rate,
        _offered_rate(data),
    )


def _offered_rate(data: dict[str, Any]) -> float | None:
    level = data.get("level")
    if data.get("mode") != "rate" or not isinstance(level, int | float):
        return None
    return float(level)


def load_token_measurement(path: Path) -> TokenMeasurement | None:
    """``path``'s token measurement; None when the file is another kind of measurement."""
    try:
        data = read_bench_json(path)
    except UsageError:
        return None  # the request-measurement reader reports what is wrong with the file
    return token_measurement(path, data)


def per_million(usd_per_hour: Decimal, tokens_per_s: Decimal) -> Decimal:
    """US dollars per million output tokens for a unit at ``tokens_per_s``."""
    cost = usd_per_hour / (tokens_per_s * SECONDS_PER_HOUR) * MILLION
    return cost.quantize(Decimal("0.0001"))


def row(candidate: Candidate, source: str, safety: Decimal) -> TokenRow:
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
    )


def baseline(spec: str, region: str, prices: PriceTable, safety: Decimal) -> TokenRow:
    """``TYPE:RATEtok/s[:USD_PER_HOUR]``, e.g. ``inf2.xlarge:310tok/s:0.76``: what one instance
    of TYPE generates, from a published Neuron figure for the model (price from the table's EC2
    or SageMaker section when omitted)."""
    parts = spec.split(":")
    hint = 'e.g. --baseline "inf2.xlarge:310tok/s:0.76" (type, output tokens/s, $/h)'
    if len(parts) not in (2, 3) or not parts[0] or not parts[1].endswith(TOKEN_RATE_SUFFIX):
        raise UsageError(f"--baseline {spec!r}: expected TYPE:RATEtok/s[:USD_PER_HOUR]", hint=hint)
    name = parts[0]
    rate = _positive(parts[1].removesuffix(TOKEN_RATE_SUFFIX), spec, hint)
    if len(parts) == 3:
        price, where = _positive(parts[2], spec, hint, MAX_PRICE), "price given"
    else:
        section = "sagemaker" if name.startswith("ml.") else "ec2"
        found = prices.lookup(section, region, name)
        price, where = found.usd_per_hour, f"price {found.source} ({prices.date})"
    source = f"--baseline: {rate} tok/s as given (a published figure for the model), {where}"
    cost = per_million(price, rate * check_safety(safety))
    return TokenRow(f"{name} (baseline)", price, rate, cost, source, True, safety)


def _positive(text: str, spec: str, hint: str, most: float = MAX_RATE) -> Decimal:
    """A rate (or, with ``most`` MAX_PRICE, a price) of ``--baseline``, in ASCII digits."""
    return decimal_of(text, f"--baseline {spec}:", MIN_RATE, most, hint=hint)
