"""Per-component status, wait and metrics of an inference-component endpoint, against boto3
clients stubbed with botocore's Stubber (moto lacks inference components; the Stubber checks
every request we make against botocore's service model)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from infra.targets.deployment import locator
from infra.targets.sagemaker_ic.client import InferenceComponentsClient
from infra.targets.sagemaker_ic.monitoring import METRICS
from tdk.errors import EndpointError

ENDPOINT = "tdk-ic"
NOW = datetime(2026, 11, 24, tzinfo=UTC)


def _client(service: str) -> Any:
    return boto3.client(
        service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )


@pytest.fixture
def stubs() -> Iterator[dict[str, Stubber]]:
    made = {service: Stubber(_client(service)) for service in ("sagemaker", "cloudwatch")}
    for stub in made.values():
        stub.activate()
    yield made
    for stub in made.values():
        stub.deactivate()


def _ic(stubs: dict[str, Stubber]) -> InferenceComponentsClient:
    return InferenceComponentsClient(
        "sagemaker-ic", ENDPOINT, "us-east-1", clients=lambda service: stubs[service].client
    )


def _endpoint(stub: Stubber, status: str = "InService", failure: str | None = None) -> None:
    found: dict[str, Any] = {
        "EndpointName": ENDPOINT,
        "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}",
        "EndpointConfigName": "cfg",
        "EndpointStatus": status,
        "CreationTime": NOW,
        "LastModifiedTime": NOW,
        "ProductionVariants": [
            {"VariantName": "AllTraffic", "CurrentInstanceCount": 1, "DesiredInstanceCount": 2}
        ],
    }
    if failure:
        found["FailureReason"] = failure
    stub.add_response("describe_endpoint", found, {"EndpointName": ENDPOINT})


def _components(stub: Stubber, states: dict[str, tuple[str, int, int, str | None]]) -> None:
    summaries = [
        {
            "InferenceComponentName": name,
            "InferenceComponentArn": f"arn:aws:sagemaker:us-east-1:123456789012:ic/{name}",
            "EndpointName": ENDPOINT,
            "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}",
            "VariantName": "AllTraffic",
            "CreationTime": NOW,
            "LastModifiedTime": NOW,
        }
        for name in states
    ]
    stub.add_response(
        "list_inference_components",
        {"InferenceComponents": summaries},
        {"EndpointNameEquals": ENDPOINT},
    )
    for name, (status, desired, current, failure) in sorted(states.items()):
        found: dict[str, Any] = {
            "InferenceComponentName": name,
            "InferenceComponentArn": f"arn:aws:sagemaker:us-east-1:123456789012:ic/{name}",
            "EndpointName": ENDPOINT,
            "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}",
            "CreationTime": NOW,
            "LastModifiedTime": NOW,
            "InferenceComponentStatus": status,
            "Specification": {"InstanceType": "ml.g5.xlarge"},
            "RuntimeConfig": {"DesiredCopyCount": desired, "CurrentCopyCount": current},
        }
        if failure:
            found["FailureReason"] = failure
        stub.add_response("describe_inference_component", found, {"InferenceComponentName": name})


def test_status_reports_copies_per_component(stubs: dict[str, Stubber]) -> None:
    _endpoint(stubs["sagemaker"])
    _components(
        stubs["sagemaker"],
        {"bert-0": ("InService", 2, 2, None), "text-pipeline-0": ("Updating", 1, 0, None)},
    )
    status = _ic(stubs).status()
    assert not status.ready
    assert status.state == "InService (1 component(s) not yet)"
    rows = {row["component"]: row for row in status.rows}
    assert rows["bert-0"]["desired_copies"] == 2 and rows["bert-0"]["current_copies"] == 2
    assert rows["text-pipeline-0"]["status"] == "Updating"
    assert rows["text-pipeline-0"]["instance_type"] == "ml.g5.xlarge"
    assert status.details["current_instances"] == 1
    assert status.details["desired_instances"] == 2
    stubs["sagemaker"].assert_no_pending_responses()


def test_wait_fails_with_the_components_failure(stubs: dict[str, Stubber]) -> None:
    _endpoint(stubs["sagemaker"])
    _components(stubs["sagemaker"], {"bert-0": ("Failed", 1, 0, "health check timed out")})
    with pytest.raises(EndpointError) as info:
        _ic(stubs).wait(timeout=60, interval=0, on_change=lambda s: None)
    assert "component bert-0 is Failed: health check timed out" in str(info.value)
    assert info.value.hint


def test_wait_returns_when_every_component_serves(stubs: dict[str, Stubber]) -> None:
    seen: list[str] = []
    _endpoint(stubs["sagemaker"], "Updating")
    _components(stubs["sagemaker"], {"bert-0": ("Creating", 1, 0, None)})
    _endpoint(stubs["sagemaker"])
    _components(stubs["sagemaker"], {"bert-0": ("InService", 1, 1, None)})
    status = _ic(stubs).wait(timeout=60, interval=0, on_change=lambda s: seen.append(s.state))
    assert status.ready and seen == ["Updating", "InService"]


def test_metrics_are_per_component(stubs: dict[str, Stubber]) -> None:
    _endpoint(stubs["sagemaker"])
    _components(stubs["sagemaker"], {"bert-0": ("InService", 1, 1, None)})
    results = [
        {"Id": f"m0_{j}", "Label": spec.label, "StatusCode": "Complete",
         "Timestamps": [NOW], "Values": [2000.0] if spec.key == "model_latency_p99" else []}
        for j, spec in enumerate(METRICS)
    ]  # fmt: skip
    expected = {"MetricDataQueries": ANY, "StartTime": ANY, "EndTime": ANY}
    stubs["cloudwatch"].add_response("get_metric_data", {"MetricDataResults": results}, expected)
    readings = {r.key: r for r in _ic(stubs).metrics(timedelta(minutes=30))}
    assert readings["bert-0.model_latency_p99"].value == pytest.approx(2.0)  # µs -> ms
    assert readings["bert-0.no_capacity"].value is None
    assert "InferenceComponentName=bert-0" in readings["bert-0.invocations"].source


def test_metrics_count_the_components_that_failed(stubs: dict[str, Stubber]) -> None:
    """A bad release shows in metrics (issue 40, row 4): failed components are counted."""
    _endpoint(stubs["sagemaker"])
    _components(
        stubs["sagemaker"],
        {"bert-0": ("Failed", 1, 0, "model failed to load"), "bert-1": ("InService", 1, 1, None)},
    )
    expected = {"MetricDataQueries": ANY, "StartTime": ANY, "EndTime": ANY}
    stubs["cloudwatch"].add_response("get_metric_data", {"MetricDataResults": []}, expected)
    readings = {r.key: r for r in _ic(stubs).metrics(timedelta(minutes=30))}
    assert readings["model_load_failures"].value == 1
    assert "DescribeInferenceComponent" in readings["model_load_failures"].source


def test_operations_registry_knows_the_target() -> None:
    where = locator("sagemaker-ic", {"endpoint": ENDPOINT, "region": "us-east-1"})
    client = where.client()
    assert client.where() == {"endpoint": ENDPOINT, "region": "us-east-1"}
