"""Blue/green endpoint updates with automatic rollback on the stack's alarms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

STRATEGIES = ("ALL_AT_ONCE", "CANARY", "LINEAR")


@dataclass(frozen=True)
class Rollout:
    """How traffic shifts to the new fleet, and how long each step bakes."""

    strategy: str
    step_percent: int
    wait_seconds: int


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
