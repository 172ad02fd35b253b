"""Every registered target's committed price table as one: a ``tdk plan --baseline`` or
``--components`` may name another cloud's unit than the planned target's, and ``tdk doctor``
dates them all. Each table is its target's plan port's (``PlanPort.prices``); nothing here
names one."""

from __future__ import annotations

from infra.planning.pricing import PriceTable, merge
from infra.targets import registry
from infra.targets.capabilities import Refused
from infra.targets.ports import PlanPort


def prices() -> PriceTable:
    """The sections of every planning target's table (dated by the oldest)."""
    ports = (e.plan for e in registry.entries() if not isinstance(e.plan, Refused))
    tables = (port.prices() for port in ports)
    return merge(table for table in tables if table is not None)


def plan_prices(port: PlanPort) -> PriceTable:
    """What ``tdk plan`` prices ``port``'s candidates from without ``--prices``: its own
    table, or every target's where it commits none."""
    return port.prices() or prices()
