"""Google Cloud's guardrail for every stack there: the monthly Cloud Billing budget of the stack's
project (``gcp.billing.Budget``), with the thresholds every cloud's budget shares
(``infra.values.guardrails``), and the API it needs."""

from __future__ import annotations

from typing import Any

from infra.values.guardrails import ACTUAL_THRESHOLDS, FORECAST_THRESHOLD, Budget

#: enabled only when a billing budget is declared (gkeBillingAccount set)
BUDGET_SERVICE = "billingbudgets.googleapis.com"


def budget_args(
    stack_name: str, budget: Budget, billing_account: str, project_number: Any, channels: list[Any]
) -> dict[str, Any]:
    """``gcp.billing.Budget`` arguments for the stack's project: the same thresholds; billing
    admins are mailed by default, plus the stack's notification channels."""
    rules = [
        {"threshold_percent": t / 100, "spend_basis": "CURRENT_SPEND"} for t in ACTUAL_THRESHOLDS
    ]
    rules.append({"threshold_percent": FORECAST_THRESHOLD / 100, "spend_basis": "FORECASTED_SPEND"})
    return {
        "billing_account": billing_account,
        "display_name": f"{stack_name}-monthly",
        "amount": {"specified_amount": {"currency_code": "USD", "units": str(budget.monthly_usd)}},
        "budget_filter": {"projects": [project_number], "calendar_period": "MONTH"},
        "threshold_rules": rules,
        "all_updates_rule": {"monitoring_notification_channels": channels},
    }
