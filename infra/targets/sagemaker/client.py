"""Operations on a SageMaker MME: InvokeEndpoint, CloudWatch figures, endpoint state and wait."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from infra.clients.base import InferenceTarget
from infra.clients.deadline import DEFAULT_TIMEOUT_S
from infra.targets.operations import (
    EndpointLocator,
    OnChange,
    Reading,
    Status,
    TargetClient,
    load_failures,
)
from infra.targets.sagemaker.endpoint import READY_STATE, EndpointState

#: the window ``tdk metrics`` reads when none is given
DEFAULT_WINDOW = timedelta(hours=1)
#: SageMaker MME publishes no figure for a model that fails to load: the caller gets a
#: ModelError carrying the container's status and message (Triton's SageMaker front answers a
#: failed load with 400 and Triton's reason), counted in Invocation4XXErrors, and the reason is
#: logged in the endpoint's log group. Sources, checked 2026-11-27:
#: https://docs.aws.amazon.com/sagemaker/latest/dg/mms-container-apis.html (load contract),
#: https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-endpoint-cloudwatch-metrics.html
MME_LOAD_FAILURES = (
    "not published by SageMaker MME: a failed load is a ModelError (4xx) to the caller, counted "
    "in 4xx errors; Triton's reason is in CloudWatch Logs /aws/sagemaker/Endpoints/{endpoint}"
)


def as_status(target: str, state: EndpointState) -> Status:
    """``describe``'s state of an endpoint of ``target`` in the shared shape (variants as
    rows)."""
    details = state.as_dict()
    for key in ("endpoint", "status", "failure_reason"):
        details.pop(key)
    return Status(
        target,
        state.name,
        state.status,
        state.status == READY_STATE,
        state.failure_reason,
        details,
        [vars(v) for v in state.variants],
    )


class SageMakerClient(TargetClient):
    """One SageMaker endpoint by name, in ``region`` (the AWS SDK's default when None)."""

    def __init__(self, target: str, endpoint: str, region: str | None) -> None:
        self.target = target
        self.endpoint = endpoint
        self.region = region

    def where(self) -> dict[str, str | None]:
        return {"endpoint": self.endpoint, "region": self.region}

    def invoke(self, timeout: float = DEFAULT_TIMEOUT_S) -> InferenceTarget:
        from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget

        return SageMakerRuntimeTarget(self.endpoint, region=self.region, timeout=timeout)

    def metrics(self, window: timedelta | None) -> list[Reading]:
        from infra.clients.aws_session import aws_client
        from infra.clouds.aws.sagemaker.cloudwatch import endpoint_figures

        end = datetime.now(UTC).replace(microsecond=0)
        start = end - (window or DEFAULT_WINDOW)
        client = aws_client("cloudwatch", self.region)
        self.region = client.meta.region_name
        return [
            Reading(
                f.spec.key,
                f.spec.label,
                f.value,
                f.spec.unit,
                f"{f.spec.namespace} {f.spec.name} ({f.spec.stat})",
                f.datapoints,
            )
            for f in endpoint_figures(client, self.endpoint, start, end)
        ] + [load_failures(None, MME_LOAD_FAILURES.format(endpoint=self.endpoint))]

    def _describe(self) -> EndpointState:
        from infra.clients.aws_session import aws_client
        from infra.targets.sagemaker.endpoint import describe

        sagemaker = aws_client("sagemaker", self.region)
        autoscaling = aws_client("application-autoscaling", self.region)
        return describe(sagemaker, autoscaling, self.endpoint)

    def status(self) -> Status:
        return as_status(self.target, self._describe())

    def wait(self, timeout: float, interval: float, on_change: OnChange) -> Status:
        from infra.targets.sagemaker.endpoint import wait_until_in_service

        state = wait_until_in_service(
            self._describe,
            timeout,
            interval,
            on_change=lambda s: on_change(as_status(self.target, s)),
        )
        return as_status(self.target, state)


@dataclass(frozen=True, kw_only=True)
class SageMakerLocator(EndpointLocator):
    """A SageMaker endpoint: ``--endpoint`` and ``--region``, or the stack's."""

    region_key = "aws:region"  # as the program reads it (target.py)

    def client(self) -> SageMakerClient:
        endpoint = self.need("endpoint", "pass the SageMaker endpoint's name")
        return SageMakerClient(self.target, endpoint, self.region)


LOCATOR = SageMakerLocator
