"""Azure's guardrail for every stack there: the monthly cost budget (Microsoft.Consumption
budgets) on the stack's resource group, with the thresholds every cloud's budget shares
(``infra.values.guardrails``).

Source (read 2026-11-27): Microsoft.Consumption/budgets
(learn.microsoft.com/rest/api/consumption/budgets): the start date is the first of a month;
notifications ``Actual``/``Forecasted`` thresholds.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from infra.values.guardrails import ACTUAL_THRESHOLDS, FORECAST_THRESHOLD, Budget


def budget_args(name: str, monthly: Budget, scope: Any, today: dt.date) -> dict[str, Any]:
    """A monthly cost budget on the stack's resource group, e-mailing ``alertEmail`` at 80% and
    100% of actual spend and when the forecast passes it (as the eks and gke budgets)."""
    emails = [monthly.email] if monthly.email else []
    notes = {
        f"actual-{t}": {"threshold": float(t), "threshold_type": "Actual"}
        for t in ACTUAL_THRESHOLDS
    }
    notes[f"forecast-{FORECAST_THRESHOLD}"] = {
        "threshold": float(FORECAST_THRESHOLD),
        "threshold_type": "Forecasted",
    }
    return {
        "budget_name": f"{name}-monthly",
        "scope": scope,
        "amount": float(monthly.monthly_usd),
        "category": "Cost",
        "time_grain": "Monthly",
        "time_period": {"start_date": today.replace(day=1).isoformat() + "T00:00:00Z"},
        "notifications": {
            key: {"enabled": True, "operator": "GreaterThan", "contact_emails": emails, **note}
            for key, note in notes.items()
        },
    }
