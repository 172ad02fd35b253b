"""What a platform engineer expects of every stack, as pure data: a monthly cost budget with an
alert, and a control plane that is not open to the whole internet by default.

Read from the common keys (``budgetMonthlyUsd``, ``alertEmail``, ``k8sApiOpenToInternet``) and
each cluster's CIDR key; the components only wire these values. How a cloud declares the
budget (its thresholds below) and how long it keeps logs are the cloud's
(``infra/clouds/<cloud>/guardrails.py``, ``infra/targets/<target>/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infra.config import ALERT_EMAIL, ConfigReader, alert_email, qualify
from tdk.errors import ConfigError

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
    """None when ``budgetMonthlyUsd`` is 0 (the documented opt-out); ``email_required`` where
    the target's cloud needs a subscriber for every notification (its budget would else alert
    nobody)."""
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
