"""Operations on an inference-component endpoint: invoke, per-component figures, state, wait."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from infra.clients.aws_session import aws_client, aws_errors
from infra.clients.base import InferenceTarget
from infra.clients.deadline import DEFAULT_TIMEOUT_S
from infra.clouds.aws.sagemaker.cloudwatch import window_period
from infra.clouds.aws.sagemaker.metrics import MetricSpec
from infra.targets.operations import (
    EndpointLocator,
    OnChange,
    Reading,
    Status,
    TargetClient,
    load_failures,
    poll_until_ready,
)
from infra.targets.sagemaker_ic.monitoring import METRICS
from infra.targets.sagemaker_ic.scaling import COMPONENT_DIMENSION
from infra.targets.sagemaker_ic.status import FAILED, IcEndpointState, describe
from tdk.errors import EndpointError

if TYPE_CHECKING:
    from infra.clients.generate import Generator
    from packager.manifest import ManifestModel

DEFAULT_WINDOW = timedelta(hours=1)
#: CloudWatch GetMetricData takes at most 500 queries per call
MAX_QUERIES = 500


def _combine(stat: str, values: list[float]) -> float | None:
    if not values:
        return None
    if stat == "Sum":
        return sum(values)
    if stat == "Maximum":
        return max(values)
    return sum(values) / len(values)


class InferenceComponentsClient(TargetClient):
    """One endpoint's inference components, by endpoint name, in ``region``.

    ``clients(service)`` makes boto3 clients (tests hand in stubbed ones)."""

    def __init__(
        self,
        target: str,
        endpoint: str,
        region: str | None,
        clients: Callable[[str], Any] | None = None,
    ) -> None:
        self.target = target
        self.endpoint = endpoint
        self.region = region
        self._clients = clients or (lambda service: aws_client(service, region))
        self._given = clients is not None

    def where(self) -> dict[str, str | None]:
        return {"endpoint": self.endpoint, "region": self.region}

    def invoke(self, timeout: float = DEFAULT_TIMEOUT_S) -> InferenceTarget:
        from infra.targets.sagemaker_ic.runtime import InferenceComponentTarget

        return InferenceComponentTarget(self.endpoint, region=self.region, timeout=timeout)

    def generator(self, model: ManifestModel, timeout: float) -> Generator:
        """A decoupled copy's component, through InvokeEndpointWithResponseStream."""
        from infra.targets.sagemaker_ic.runtime import InferenceComponentTarget
        from infra.targets.sagemaker_ic.stream import ComponentGenerateClient

        if self._given:  # tests hand in their own clients
            runtime = self._clients("sagemaker-runtime")
        else:  # boto3 with this command's --timeout as its read timeout
            runtime = InferenceComponentTarget(self.endpoint, region=self.region, timeout=timeout)
            runtime = runtime.client
        return ComponentGenerateClient(runtime, self.endpoint, model)

    def state(self) -> IcEndpointState:
        return describe(self._clients("sagemaker"), self.endpoint)

    def status(self) -> Status:
        return self.state().as_status(self.target)

    def wait(self, timeout: float, interval: float, on_change: OnChange) -> Status:
        def poll() -> Status:
            state = self.state()
            if state.failed:
                raise EndpointError(
                    state.failed,
                    hint=f"see /aws/sagemaker/Endpoints/{self.endpoint} in CloudWatch Logs; try "
                    "the model on a small instance first (docs/sagemaker.md)",
                )
            return state.as_status(self.target)

        return poll_until_ready(poll, timeout, interval, on_change)

    def metrics(self, window: timedelta | None) -> list[Reading]:
        """Each component's figures over ``window`` (key ``<component>.<figure>``)."""
        state = self.state()
        components = [c.component for c in state.components]
        end = datetime.now(UTC).replace(microsecond=0)
        start = end - (window or DEFAULT_WINDOW)
        period = window_period(start, end)
        queries = {
            f"m{i}_{j}": (component, spec)
            for i, component in enumerate(components)
            for j, spec in enumerate(METRICS)
        }
        values = self._fetch(queries, start, end, period)
        failed = sum(1 for c in state.components if c.status in FAILED)
        source = "DescribeInferenceComponent: components in a failed state (FailureReason)"
        return [load_failures(float(failed), source), *self._readings(queries, values)]

    def _readings(self, queries: dict[str, Any], values: dict[str, list[float]]) -> list[Reading]:
        return [
            Reading(
                f"{component}.{spec.key}",
                f"{component}: {spec.label}",
                None if (v := _combine(spec.stat, values[qid])) is None else v * spec.scale,
                spec.unit,
                f"{spec.namespace} {spec.name} ({spec.stat}) {COMPONENT_DIMENSION}={component}",
                len(values[qid]),
            )
            for qid, (component, spec) in queries.items()
        ]

    def _fetch(
        self, queries: dict[str, Any], start: datetime, end: datetime, period: int
    ) -> dict[str, list[float]]:
        cloudwatch = self._clients("cloudwatch")
        values: dict[str, list[float]] = {qid: [] for qid in queries}
        ids = list(queries)
        for first in range(0, len(ids), MAX_QUERIES):
            batch = [_query(qid, queries[qid], period) for qid in ids[first : first + MAX_QUERIES]]
            request: dict[str, Any] = {"MetricDataQueries": batch, "StartTime": start,
                                       "EndTime": end}  # fmt: skip
            with aws_errors(f"read CloudWatch metrics of {self.endpoint}'s components"):
                while True:
                    page = cloudwatch.get_metric_data(**request)
                    for result in page.get("MetricDataResults", []):
                        values[result["Id"]].extend(float(v) for v in result.get("Values", []))
                    if not page.get("NextToken"):
                        break
                    request["NextToken"] = page["NextToken"]
        return values


def _query(qid: str, what: tuple[str, MetricSpec], period: int) -> dict[str, Any]:
    component, spec = what
    return {
        "Id": qid,
        "ReturnData": True,
        "MetricStat": {
            "Metric": {
                "Namespace": spec.namespace,
                "MetricName": spec.name,
                "Dimensions": [{"Name": COMPONENT_DIMENSION, "Value": component}],
            },
            "Period": period,
            "Stat": spec.stat,
        },
    }


@dataclass(frozen=True, kw_only=True)
class InferenceComponentsLocator(EndpointLocator):
    """An endpoint of inference components (its components are read from it): ``--endpoint``
    and ``--region``, or the stack's."""

    region_key = "aws:region"  # as the program reads it (target.py)

    def client(self) -> InferenceComponentsClient:
        endpoint = self.need("endpoint", "pass the SageMaker endpoint's name")
        return InferenceComponentsClient(self.target, endpoint, self.region)

    def generator(self, model: ManifestModel, timeout: float) -> Generator | None:
        """A decoupled copy's component, through InvokeEndpointWithResponseStream."""
        return self.client().generator(model, timeout)


LOCATOR = InferenceComponentsLocator
