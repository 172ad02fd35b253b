"""Every registered target's committed price table as one: a ``tdk plan --baseline`` or
``--components`` may name another cloud's unit than the planned target's, and ``tdk doctor``
dates them all. Each table is its target's (``TargetEntry.prices``); nothing here names one."""

from __future__ import annotations

from infra.planning.pricing import PriceTable, merge
from infra.targets import registry
from infra.targets.entry import TargetEntry


def prices() -> PriceTable:
    """The sections of every registered target's table (dated by the oldest)."""
    tables = (entry.prices() for entry in registry.entries())
    return merge(table for table in tables if table is not None)


def plan_prices(entry: TargetEntry) -> PriceTable:
    """What ``tdk plan`` prices ``entry``'s candidates from without ``--prices``: its own
    table, or every target's where it commits none."""
    return entry.prices() or prices()
