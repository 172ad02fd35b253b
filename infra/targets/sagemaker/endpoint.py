"""A SageMaker endpoint's state: status, instance counts, last failure; and waiting on it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from infra.clients.aws_session import aws_errors
from infra.targets.sagemaker.scaling import SCALABLE_DIMENSION, SERVICE_NAMESPACE, resource_id
from tdk.errors import EndpointError

#: states an endpoint only leaves through a new update or a delete
FAILED_STATES = ("Failed", "UpdateRollbackFailed", "OutOfService")
READY_STATE = "InService"


@dataclass(frozen=True)
class VariantState:
    """One production variant: instance counts and, when autoscaled, the bounds."""

    name: str
    instance_type: str | None
    current_instances: int | None
    desired_instances: int | None
    min_instances: int | None = None
    max_instances: int | None = None


@dataclass(frozen=True)
class EndpointState:
    """What ``describe_endpoint`` says, plus the scaling bounds of each variant."""

    name: str
    status: str
    failure_reason: str | None
    config_name: str
    last_modified: str
    variants: list[VariantState] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.name,
            "status": self.status,
            "failure_reason": self.failure_reason,
            "endpoint_config": self.config_name,
            "last_modified": self.last_modified,
            "variants": [vars(v) for v in self.variants],
        }


def _bounds(autoscaling: Any, endpoint: str, variants: list[str]) -> dict[str, tuple[int, int]]:
    """variant name -> (min, max) from Application Auto Scaling (absent when not scaled)."""
    ids = {resource_id(endpoint, name): name for name in variants}
    with aws_errors(f"read the scaling bounds of {endpoint}"):
        found = autoscaling.describe_scalable_targets(
            ServiceNamespace=SERVICE_NAMESPACE,
            ResourceIds=list(ids),
            ScalableDimension=SCALABLE_DIMENSION,
        )
    return {
        ids[t["ResourceId"]]: (t["MinCapacity"], t["MaxCapacity"])
        for t in found.get("ScalableTargets", [])
        if t["ResourceId"] in ids
    }


def describe(sagemaker: Any, autoscaling: Any | None, endpoint: str) -> EndpointState:
    """The endpoint's state; ``autoscaling`` None skips the scaling bounds."""
    with aws_errors(f"describe endpoint {endpoint}"):
        found = sagemaker.describe_endpoint(EndpointName=endpoint)
        config = sagemaker.describe_endpoint_config(EndpointConfigName=found["EndpointConfigName"])
    types = {v["VariantName"]: v.get("InstanceType") for v in config.get("ProductionVariants", [])}
    names = [v["VariantName"] for v in found.get("ProductionVariants", [])]
    bounds = _bounds(autoscaling, endpoint, names) if autoscaling is not None and names else {}
    variants = []
    for variant in found.get("ProductionVariants", []):
        name = variant["VariantName"]
        low, high = bounds.get(name, (None, None))
        variants.append(
            VariantState(
                name=name,
                instance_type=types.get(name),
                current_instances=variant.get("CurrentInstanceCount"),
                desired_instances=variant.get("DesiredInstanceCount"),
                min_instances=low,
                max_instances=high,
            )
        )
    return EndpointState(
        name=found["EndpointName"],
        status=found["EndpointStatus"],
        failure_reason=found.get("FailureReason"),
        config_name=found["EndpointConfigName"],
        last_modified=str(found.get("LastModifiedTime", "")),
        variants=variants,
    )


def wait_until_in_service(
    poll: Callable[[], EndpointState],
    timeout: float,
    interval: float,
    on_change: Callable[[EndpointState], None] = lambda state: None,
    sleep: Callable[[float], None] = time.sleep,
) -> EndpointState:
    """Poll until InService; EndpointError on a failed state, a rollback, or the timeout."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while True:
        state = poll()
        if not seen or seen[-1] != state.status:
            seen.append(state.status)
            on_change(state)
        reason = f": {state.failure_reason}" if state.failure_reason else ""
        if state.status in FAILED_STATES:
            raise EndpointError(
                f"endpoint {state.name} is {state.status}{reason}",
                hint="see the endpoint's CloudWatch logs (/aws/sagemaker/Endpoints/"
                f"{state.name}), fix the release or config, then `pulumi up` again",
            )
        if state.status == READY_STATE:
            if "RollingBack" in seen:
                raise EndpointError(
                    f"endpoint {state.name} rolled the update back and serves the previous "
                    f"release{reason}",
                    hint="a rollback alarm fired while the new fleet baked; see the dashboard",
                )
            return state
        if time.monotonic() >= deadline:
            raise EndpointError(
                f"endpoint {state.name} is still {state.status} after {timeout:.0f} s",
                hint="wait longer (--timeout) or check `tdk endpoint status`",
            )
        sleep(interval)
