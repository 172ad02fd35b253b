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
from decimal import Decimal

from tdk.errors import TdkError, UsageError

_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INT = re.compile(r"[+-]?[0-9]+")
_MAX_TEXT = 100  # a number longer than this is no number a user means


def _range(low: float | None, high: float | None, above: bool, integer: bool) -> str:
    what = "a whole number" if integer else "a finite number"
    parts = []
    if low is not None:
        parts.append(f"{'>' if above else '>='} {low:g}")
    if high is not None:
        parts.append(f"<= {high:g}")
    return f"{what} {' and '.join(parts)}".rstrip()


def _example(low: float | None, high: float | None, above: bool) -> float:
    if low is None:
        return 1 if high is None or high >= 1 else high
    if not above:
        return low
    return low + 1 if high is None or low + 1 <= high else high


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
    wanted = _range(low, high, above, integer)
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and integer:
        ok = isinstance(value, int)
    if ok and isinstance(value, float):
        ok = math.isfinite(value)
    if ok:
        number = float(value)  # type: ignore[arg-type]
        below = low is not None and (number <= low if above else number < low)
        ok = not below and not (high is not None and number > high)
    if not ok:
        shown = repr(value)[:_MAX_TEXT]
        raise error(f"{name} {shown}: must be {wanted}", hint=hint or f"give {name} {wanted}")
    return value  # type: ignore[return-value]


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
    stripped = text.strip()
    pattern = _INT if integer else _FLOAT
    if len(stripped) > _MAX_TEXT or not pattern.fullmatch(stripped):
        wanted = _range(low, high, above, integer)
        raise error(
            f"{name} {text[:_MAX_TEXT]!r}: not {wanted} written in ASCII digits",
            hint=hint or f"give {name} {wanted}, e.g. {_example(low, high, above):g}",
        )
    value = int(stripped) if integer else float(stripped)
    return check_number(
        value, name, low, high, above=above, integer=integer, hint=hint, error=error
    )


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
    wanted = _range(low, high, above, integer)
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
