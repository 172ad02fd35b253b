"""Azure's guardrail (infra/clouds/azure/guardrails.py): the monthly budget's period and
notifications."""

from __future__ import annotations

import datetime as dt

from infra.clouds.azure.guardrails import budget_args
from infra.values.guardrails import Budget


def test_the_budget_starts_on_the_first_of_the_month_and_mails_the_alert_address() -> None:
    args = budget_args("tdk", Budget(500, "ops@example.com"), "/rg", dt.date(2026, 11, 27))
    assert args["time_period"] == {"start_date": "2026-11-01T00:00:00Z"}
    assert args["amount"] == 500.0 and args["time_grain"] == "Monthly"
    kinds = sorted((n["threshold_type"], n["threshold"]) for n in args["notifications"].values())
    assert kinds == [("Actual", 80.0), ("Actual", 100.0), ("Forecasted", 100.0)]
    assert all(n["contact_emails"] == ["ops@example.com"] for n in args["notifications"].values())
