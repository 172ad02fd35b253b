"""What every price fetcher (``python -m infra.<cloud>.fetch_prices``) shares: a price read
from a cloud's API is a finite number above zero, and a fetch that fails (an HTML page, a
403, an empty or non-finite answer) is one line on stderr, exit 1, the table left as it was."""

from __future__ import annotations

import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from infra.planning.report import MAX_PRICE
from tdk.errors import TdkError

#: what a fetch can fail with: a refused document (TdkError), an HTTP status or a network
#: failure (urllib's HTTPError/URLError are OSErrors), an answer of another shape
FETCH_ERRORS: tuple[type[BaseException], ...] = (
    TdkError, OSError, ValueError, KeyError, TypeError, IndexError, ArithmeticError,
)  # fmt: skip


def fetched_price(value: Any, where: str) -> Decimal:
    """``value`` as an hourly price, ValueError unless a finite number above 0 and at most
    ``MAX_PRICE`` (an API answering 0, ``Infinity`` or text has given no price to plan with)."""
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        price = Decimal("NaN")
    if not price.is_finite() or not 0 < price <= MAX_PRICE:
        raise ValueError(
            f"{where}: price {str(value)[:40]!r} is no hourly price (a finite number above 0, "
            f"at most {MAX_PRICE})"
        )
    return price


def run_fetch(fetch: Callable[[], str], errors: tuple[type[BaseException], ...] = ()) -> int:
    """Run ``fetch`` (which fetches, writes the table last, and says what it wrote): 0, or 1
    with one line naming what failed and that nothing was written."""
    try:
        done = fetch()
    except (*FETCH_ERRORS, *errors) as exc:
        if isinstance(exc, TdkError):
            what = exc.message
        elif isinstance(exc, (KeyError, IndexError, TypeError)):
            what = f"the API answered in another shape than expected ({type(exc).__name__}: {exc})"
        else:
            what = str(exc) or type(exc).__name__
        sys.stderr.write(f"error: {what}; nothing written\n")
        return 1
    sys.stdout.write(done + "\n")
    return 0
