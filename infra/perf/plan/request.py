"""What one ``tdk plan`` asks for: the command's options, as given, in one frozen value, with
its numbers read exactly (``budget_ms``, ``peak``, ``safety``: Decimals, the flag named when
one is not a number in range).

The command builds it once from its options (``cli/plan.py``: the help texts and defaults) and
hands it on, to the request plan and the token plan alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from infra.planning.report import MAX_RATE
from tdk.numbers import decimal_of


@dataclass(frozen=True)
class PlanRequest:
    """``tdk plan``'s options by name, as given (``None``: not given, the default applies);
    ``target`` is ``--target``'s name."""

    measurement: Path
    peak_rps: str | None
    traffic: Path | None
    slo_ms: str | None
    target: str | None
    instance_types: list[str] | None
    region: str | None
    gpus_per_node: int
    baseline: str | None
    safety_factor: str
    prices: Path | None
    plot: Path | None
    write_stack: Path | None
    components: str | None
    hot_models: int | None
    force: bool
    json: bool
    mme_trace: Path | None = None
    hit_ratio: float = 0.9
    budgets: list[int] | None = None
    max_pods: int = 8

    @property
    def budget_ms(self) -> Decimal | None:
        """``--latency-budget-ms`` (on a token measurement: of p99 time to first token)."""
        return number("--latency-budget-ms", self.slo_ms)

    @property
    def peak(self) -> Decimal | None:
        """``--peak-rps`` (on a token measurement: requests/s at its sequence lengths)."""
        return number("--peak-rps", self.peak_rps)

    @property
    def safety(self) -> Decimal:
        """``--safety-factor``: the share of a unit's capacity to plan for."""
        return number("--safety-factor", self.safety_factor) or Decimal(0)


def number(option: str, text: str | None) -> Decimal | None:
    """``text`` as an exact Decimal (None when not given): ASCII digits, finite, in range (1e300
    or an Arabic-Indic digit is refused, not priced), else a UsageError naming ``option``."""
    if text is None:
        return None
    return decimal_of(text, option, 0, MAX_RATE, hint=f"e.g. {option} 100")
