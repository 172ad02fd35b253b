"""One check for every number a user hands tdk (options, environment variables, file fields):
finite and in range, written in ASCII digits.

Python's own parsers are too lenient for input: ``float("nan")`` and ``float("1e999")`` (inf)
compare false with every bound, so ``min=``/``max=`` let them through; ``int("0_1")`` is 1 and
``int("\\u0661")`` (an Arabic-Indic one) is 1 as well. Every refusal names the option, variable or
field and the range it takes.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from decimal import Decimal

from tdk.errors import TdkError, UsageError

_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INT = re.compile(r"[+-]?[0-9]+")
_MAX_TEXT = 100  # a number longer than this is no number a user means


@dataclass(frozen=True)
class _Range:
    """The numbers a field takes: ``[low, high]`` (``(low, high]`` with ``above``), whole ones
    only with ``integer``; the one range check ``check_number`` and ``parse_number`` share."""

    low: float | None
    high: float | None
    above: bool
    integer: bool

    def __str__(self) -> str:
        what = "a whole number" if self.integer else "a finite number"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.above else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        return f"{what} {' and '.join(parts)}".rstrip()

    def example(self) -> float:
        low, high = self.low, self.high
        if low is None:
            return 1 if high is None or high >= 1 else high
        if not self.above:
            return low
        return low + 1 if high is None or low + 1 <= high else high

    def admits(self, value: object) -> bool:
        """A finite int or float (an int with ``integer``; never a bool) inside the range."""
        if isinstance(value, bool) or not isinstance(value, int if self.integer else int | float):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        number = float(value)
        low, high = self.low, self.high
        below = low is not None and (number <= low if self.above else number < low)
        return not below and not (high is not None and number > high)


def _checked(value: object, name: str, span: _Range, hint: str, error: type[TdkError]) -> float:
    if not span.admits(value):
        shown = repr(value)[:_MAX_TEXT]
        raise error(f"{name} {shown}: must be {span}", hint=hint or f"give {name} {span}")
    return value  # type: ignore[return-value]


def check_number(
    value: object,
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    above: bool = False,
    integer: bool = False,
    hint: str = "",
    error: type[TdkError] = UsageError,
) -> float:
    """``value`` when it is a finite number (a whole one with ``integer``) in ``[low, high]``
    (``(low, high]`` with ``above``); ``error`` naming ``name`` and the range otherwise."""
    return _checked(value, name, _Range(low, high, above, integer), hint, error)


def parse_number(
    text: str,
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    above: bool = False,
    integer: bool = False,
    hint: str = "",
    error: type[TdkError] = UsageError,
) -> float:
    """``text`` read as a number written in ASCII digits (``nan``, ``inf``, ``1_0`` and other
    scripts' digits refused), then ``check_number``."""
    span = _Range(low, high, above, integer)
    stripped = text.strip()
    pattern = _INT if integer else _FLOAT
    if len(stripped) > _MAX_TEXT or not pattern.fullmatch(stripped):
        raise error(
            f"{name} {text[:_MAX_TEXT]!r}: not {span} written in ASCII digits",
            hint=hint or f"give {name} {span}, e.g. {span.example():g}",
        )
    return _checked(int(stripped) if integer else float(stripped), name, span, hint, error)


def env_number(
    name: str,
    default: float,
    low: float | None = None,
    high: float | None = None,
    *,
    above: bool = False,
    integer: bool = False,
    error: type[TdkError] = UsageError,
) -> float:
    """The environment variable ``name`` read with ``parse_number``; ``default`` when unset."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    wanted = _Range(low, high, above, integer)
    return parse_number(
        raw,
        f"environment variable {name}",
        low,
        high,
        above=above,
        integer=integer,
        hint=f"unset {name} or set it to {wanted}",
        error=error,
    )


def ascii_int(text: str) -> int | None:
    """``text`` as a whole number written in ASCII digits (no sign, underscore or other
    script's digits), None otherwise: for parts of a list such as ``0-3,5``."""
    stripped = text.strip()
    if len(stripped) > _MAX_TEXT or not stripped.isascii() or not stripped.isdigit():
        return None
    return int(stripped)


def decimal_of(
    value: object,
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    above: bool = False,
    hint: str = "",
) -> Decimal:
    """``value`` (a JSON number, or text in ASCII digits) as an exact Decimal, checked as
    ``check_number`` checks: a rate of ``1e-308`` or a price of ``1e300`` would overflow the
    cost arithmetic's quantize (``decimal.InvalidOperation``) if let in."""
    if isinstance(value, str):
        parse_number(value, name, low, high, above=above, hint=hint)
        return Decimal(value.strip())
    check_number(value, name, low, high, above=above, hint=hint)
    return Decimal(str(value))
