"""Cloud and Triton facts as data, each table with its source URL and the date it was checked.

Dates in the tables are compared with today (``today()``, injectable through the
``TDK_TODAY`` environment variable for tests and ``tdk doctor``), never with the day the code
was written. Pure data and functions: no Pulumi, no cloud SDK.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

#: the day every hand-written table below was last checked against its source
CHECKED = dt.date(2026, 11, 24)
#: installs the kit's ``infra`` extra (Pulumi's SDK and providers, sagemaker-core), which
#: `make demo` leaves out; Pulumi.yaml runs the stacks' program with .venv's Python
INFRA_EXTRA_INSTALL = "make extra EXTRA=infra"  # in the clone: the extra's packages, the kit kept


@dataclass(frozen=True)
class Source:
    """Where a table comes from and when it was last compared with that source."""

    url: str
    checked: dt.date = CHECKED


#: the dates TDK_TODAY may replay: the calendars add years of margin to it (9999-12-31 plus
#: a day overflowed), and no support window of ours starts before 1970
TODAY_RANGE = (dt.date(1970, 1, 1), dt.date(2999, 12, 31))


def today() -> dt.date:
    """Today, or ``TDK_TODAY`` (YYYY-MM-DD) when set (tests and doctor replay a calendar)."""
    raw = os.environ.get("TDK_TODAY", "").strip()
    if not raw:
        return dt.date.today()
    from tdk.errors import UsageError

    try:
        replayed = dt.date.fromisoformat(raw)
    except ValueError:
        raise UsageError(
            f"TDK_TODAY={raw[:40]!r} is not a date",
            hint="set TDK_TODAY=YYYY-MM-DD (e.g. 2026-11-26), or unset it for today",
        ) from None
    first, last = TODAY_RANGE
    if not first <= replayed <= last:
        raise UsageError(
            f"TDK_TODAY={raw!r} is outside {first}..{last}, the dates tdk's calendars handle",
            hint="set TDK_TODAY to a date in that range, or unset it for today",
        )
    return replayed
