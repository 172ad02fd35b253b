"""AWS's guardrails for every stack there: the monthly budget (AWS Budgets) and how long
CloudWatch Logs keeps the stack's logs (``awsLogRetentionDays``)."""

from __future__ import annotations

from typing import Any

from infra.config import ConfigReader, qualify
from infra.values.guardrails import ACTUAL_THRESHOLDS, FORECAST_THRESHOLD, Budget
from tdk.errors import ConfigError

#: the retention periods CloudWatch Logs accepts (PutRetentionPolicy retentionInDays)
LOG_RETENTION_DAYS: tuple[int, ...] = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
    2922, 3288, 3653,
)  # fmt: skip


def read_log_retention(reader: ConfigReader) -> int:
    days = reader.integer("awsLogRetentionDays")
    if days not in LOG_RETENTION_DAYS:
        raise ConfigError(
            f"{qualify('awsLogRetentionDays')} is {days}, which CloudWatch Logs does not accept; "
            f"valid values: {', '.join(map(str, LOG_RETENTION_DAYS))}",
            hint=f"`pulumi config set {qualify('awsLogRetentionDays')} 30`",
        )
    return days


def budget_args(stack_name: str, budget: Budget) -> dict[str, Any]:
    """``aws.budgets.Budget`` arguments: monthly cost, alerts at 80% and 100% of actual spend
    and when the forecast passes the budget, mailed to ``alertEmail``."""
    subscribers: dict[str, Any] = {"subscriber_email_addresses": [budget.email]}
    notifications = [
        {"notification_type": "ACTUAL", "threshold": float(t), **subscribers}
        for t in ACTUAL_THRESHOLDS
    ] + [{"notification_type": "FORECASTED", "threshold": float(FORECAST_THRESHOLD), **subscribers}]
    return {
        "name": f"{stack_name}-monthly",
        "budget_type": "COST",
        "time_unit": "MONTHLY",
        "limit_amount": str(budget.monthly_usd),
        "limit_unit": "USD",
        "notifications": [
            {"comparison_operator": "GREATER_THAN", "threshold_type": "PERCENTAGE", **n}
            for n in notifications
        ],
    }
