"""What a platform engineer expects of every stack, as pure data: a monthly cost budget with an
alert, log retention, and a control plane that is not open to the whole internet by default.

Read from the common keys (``budgetMonthlyUsd``, ``alertEmail``, ``awsLogRetentionDays``,
``k8sApiOpenToInternet``) and each cluster's CIDR key; the components only wire these values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from infra.config import ALERT_EMAIL, ConfigReader, alert_email, qualify
from tdk.errors import ConfigError

#: the retention periods CloudWatch Logs accepts (PutRetentionPolicy retentionInDays)
LOG_RETENTION_DAYS: tuple[int, ...] = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
    2922, 3288, 3653,
)  # fmt: skip
#: alert when actual spend passes these percentages of the budget, and when the forecast does
ACTUAL_THRESHOLDS = (80, 100)
FORECAST_THRESHOLD = 100
_CIDR = re.compile(r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$")
OPEN_TO_INTERNET = ("0.0.0.0/0",)


@dataclass(frozen=True)
class Budget:
    """A monthly cost budget in USD and who is told when it is close or passed."""

    monthly_usd: int
    email: str | None


def read_budget(reader: ConfigReader, email_required: bool) -> Budget | None:
    """None when ``budgetMonthlyUsd`` is 0 (the documented opt-out).

    AWS Budgets needs a subscriber for every notification, so on AWS the email is required.
    """
    amount = reader.integer("budgetMonthlyUsd", minimum=0)
    email = alert_email(reader, "budgetEmail")
    if amount == 0:
        return None
    if email is None and email_required:
        raise ConfigError(
            f"{qualify('budgetMonthlyUsd')} is {amount} but {qualify(ALERT_EMAIL)} is empty: "
            "the budget would alert nobody",
            hint=f"`pulumi config set {qualify(ALERT_EMAIL)} you@example.com`, or opt out "
            f"of the cost guardrail with `pulumi config set {qualify('budgetMonthlyUsd')} 0`",
        )
    return Budget(amount, email)


def read_log_retention(reader: ConfigReader) -> int:
    days = reader.integer("awsLogRetentionDays")
    if days not in LOG_RETENTION_DAYS:
        raise ConfigError(
            f"{qualify('awsLogRetentionDays')} is {days}, which CloudWatch Logs does not accept; "
            f"valid values: {', '.join(map(str, LOG_RETENTION_DAYS))}",
            hint=f"`pulumi config set {qualify('awsLogRetentionDays')} 30`",
        )
    return days


def read_api_cidrs(reader: ConfigReader, key: str) -> tuple[str, ...]:
    """Who may reach the cluster's API (``key``: eksPublicAccessCidrs, gkeAuthorizedNetworks):
    the caller's CIDRs; the whole internet only when the user opts in with
    ``k8sApiOpenToInternet``."""
    raw = reader.optional_string(key) or ""
    cidrs = tuple(item.strip() for item in raw.split(",") if item.strip())
    for cidr in cidrs:
        if not _CIDR.match(cidr):
            raise ConfigError(
                f"{qualify(key)} holds {cidr!r}, not an IPv4 CIDR",
                hint=f"`pulumi config set {qualify(key)} 203.0.113.0/24`",
            )
    open_to_internet = reader.boolean("k8sApiOpenToInternet")
    if cidrs and open_to_internet:
        raise ConfigError(
            f"{qualify(key)} and {qualify('k8sApiOpenToInternet')} contradict each other",
            hint=f"empty {qualify(key)} or set {qualify('k8sApiOpenToInternet')} false",
        )
    if cidrs:
        return cidrs
    if not open_to_internet:
        raise ConfigError(
            f"{qualify(key)} is empty: the cluster API would be reachable from "
            "0.0.0.0/0 (authenticated, but open to the whole internet)",
            hint=f"`pulumi config set {qualify(key)} <your office/VPN CIDR>/32`, or "
            f"accept an open API with `pulumi config set {qualify('k8sApiOpenToInternet')} true`",
        )
    return OPEN_TO_INTERNET


def aws_budget_args(stack_name: str, budget: Budget) -> dict[str, Any]:
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


def gcp_budget_args(
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
