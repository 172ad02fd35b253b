"""Blue/green endpoint updates with automatic rollback on the stack's alarms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infra.config import qualify
from tdk.errors import ConfigError

STRATEGIES = ("ALL_AT_ONCE", "CANARY", "LINEAR")
STEP_KEY = "sagemakerRolloutStepPercent"
#: CAPACITY_PERCENT bounds of the step, per strategy (SageMaker API TrafficRoutingConfig:
#: CanarySize <= 50% and LinearStepSize 10-50% of the variant's instance count)
STEP_BOUNDS: dict[str, tuple[int, int]] = {"CANARY": (1, 50), "LINEAR": (10, 50)}


@dataclass(frozen=True)
class Rollout:
    """How traffic shifts to the new fleet, and how long each step bakes."""

    strategy: str
    step_percent: int
    wait_seconds: int


def check_rollout(strategy: str, step_percent: int) -> None:
    """Refuse a step SageMaker would reject at the first blue/green update, not at create."""
    if strategy not in STEP_BOUNDS:
        return
    low, high = STEP_BOUNDS[strategy]
    if not low <= step_percent <= high:
        field = "CanarySize" if strategy == "CANARY" else "LinearStepSize"
        raise ConfigError(
            f"{qualify(STEP_KEY)} is {step_percent}, but with {strategy} rollouts SageMaker "
            f"requires {field} of {low}-{high}% of the variant's instances (it would fail the "
            "first blue/green update, not the first deploy)",
            hint=f"`pulumi config set {qualify(STEP_KEY)} {min(max(step_percent, low), high)}`",
        )


def deployment_config(rollout: Rollout, rollback_alarms: Sequence[Any]) -> dict[str, Any]:
    """``aws.sagemaker.Endpoint`` ``deployment_config``: blue/green + auto rollback."""
    routing: dict[str, Any] = {
        "type": rollout.strategy,
        "wait_interval_in_seconds": rollout.wait_seconds,
    }
    step = {"type": "CAPACITY_PERCENT", "value": rollout.step_percent}
    if rollout.strategy == "CANARY":
        routing["canary_size"] = step
    elif rollout.strategy == "LINEAR":
        routing["linear_step_size"] = step
    return {
        "blue_green_update_policy": {
            "traffic_routing_configuration": routing,
            "termination_wait_in_seconds": rollout.wait_seconds,
        },
        "auto_rollback_configuration": {
            "alarms": [{"alarm_name": name} for name in rollback_alarms],
        },
    }
