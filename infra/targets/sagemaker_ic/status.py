"""An inference-component endpoint's state: the endpoint, and per component its copies.

Read with DescribeEndpoint, ListInferenceComponents and DescribeInferenceComponent (botocore
sagemaker model; InferenceComponentStatus is one of InService, Creating, Updating, Failed,
Deleting, checked 2026-11-24).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infra.clients.aws_session import aws_errors
from infra.targets.operations import Status

READY = "InService"
FAILED = ("Failed", "UpdateRollbackFailed", "OutOfService")


@dataclass(frozen=True)
class ComponentState:
    """One component: status, desired and current copies, where it runs, last failure."""

    component: str
    status: str
    desired_copies: int | None
    current_copies: int | None
    instance_type: str | None
    failure: str | None


@dataclass(frozen=True)
class IcEndpointState:
    name: str
    status: str
    failure: str | None
    instances: dict[str, int | None]
    components: list[ComponentState] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return self.status == READY and all(c.status == READY for c in self.components)

    @property
    def failed(self) -> str | None:
        """Why the endpoint or a component failed (None while nothing has)."""
        if self.status in FAILED:
            return f"endpoint {self.name} is {self.status}: {self.failure or 'no reason given'}"
        for c in self.components:
            if c.status in FAILED:
                return f"component {c.component} is {c.status}: {c.failure or 'no reason given'}"
        return None

    def as_status(self, target: str) -> Status:
        state = self.status
        pending = [c.component for c in self.components if c.status != READY]
        if self.status == READY and pending:
            state = f"{READY} ({len(pending)} component(s) not yet)"
        rows: list[Mapping[str, Any]] = [vars(c) for c in self.components]
        details = {**self.instances, "components": len(self.components)}
        return Status(target, self.name, state, self.ready, self.failed or self.failure,
                      details, rows, final=self.failed is not None)  # fmt: skip


def _component(sagemaker: Any, name: str) -> ComponentState:
    with aws_errors(f"describe inference component {name}"):
        found = sagemaker.describe_inference_component(InferenceComponentName=name)
    runtime = found.get("RuntimeConfig", {})
    spec = found.get("Specification", {})
    return ComponentState(
        component=name,
        status=found.get("InferenceComponentStatus", "Unknown"),
        desired_copies=runtime.get("DesiredCopyCount"),
        current_copies=runtime.get("CurrentCopyCount"),
        instance_type=spec.get("InstanceType"),
        failure=found.get("FailureReason"),
    )


def _component_names(sagemaker: Any, endpoint: str) -> list[str]:
    names: list[str] = []
    request: dict[str, Any] = {"EndpointNameEquals": endpoint}
    with aws_errors(f"list the inference components of {endpoint}"):
        while True:
            page = sagemaker.list_inference_components(**request)
            names += [c["InferenceComponentName"] for c in page.get("InferenceComponents", [])]
            if not page.get("NextToken"):
                return sorted(names)
            request["NextToken"] = page["NextToken"]


def describe(sagemaker: Any, endpoint: str) -> IcEndpointState:
    """The endpoint and every component on it."""
    with aws_errors(f"describe endpoint {endpoint}"):
        found = sagemaker.describe_endpoint(EndpointName=endpoint)
    variants = found.get("ProductionVariants", [])
    instances = {
        "current_instances": sum(v.get("CurrentInstanceCount") or 0 for v in variants),
        "desired_instances": sum(v.get("DesiredInstanceCount") or 0 for v in variants),
    }
    return IcEndpointState(
        name=found["EndpointName"],
        status=found["EndpointStatus"],
        failure=found.get("FailureReason"),
        instances=dict(instances),
        components=[_component(sagemaker, n) for n in _component_names(sagemaker, endpoint)],
    )
