"""The real Pulumi program, run under mocks with the committed Pulumi.sagemaker-dev.yaml."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from infra.facts.triton import default_sagemaker_triton_version
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import run_stack
from tests.registry_lists import deployable_targets

MODEL = "aws:sagemaker/model:Model"
ENDPOINT = "aws:sagemaker/endpoint:Endpoint"
ENDPOINT_CONFIG = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
POLICY = "aws:appautoscaling/policy:Policy"
TARGET = "aws:appautoscaling/target:Target"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
BUCKET = "aws:s3/bucket:Bucket"
STACK = "sagemaker-dev"


@pytest.fixture(scope="module")
def dev(stack_runner: Callable[..., Any]) -> Any:
    return stack_runner(STACK)


@pytest.fixture(scope="module")
def existing_release(stack_runner: Callable[..., Any]) -> Any:
    return stack_runner(
        STACK,
        {
            "releaseUrl": "s3://team-models/releases/v7",
            "sagemakerScaleOnGpu": True,
            "alertEmail": "oncall@example.com",
        },
    )


def _policy_statements(run: Any) -> list[dict[str, Any]]:
    document = json.loads(run.one(ROLE_POLICY).inputs["policy"])
    statements: list[dict[str, Any]] = document["Statement"]
    return statements


def test_dev_stack_declares_the_whole_endpoint(dev: Any) -> None:
    assert {
        "tdk:aws:SageMakerMme", MODEL, ENDPOINT_CONFIG, ENDPOINT, TARGET, POLICY, ALARM,
        "aws:cloudwatch/dashboard:Dashboard", "aws:iam/role:Role", ROLE_POLICY, BUCKET,
    } <= dev.types()  # fmt: skip
    assert "aws:sns/topic:Topic" in dev.types()  # the dev stack sets alertEmail: alarms mail it


def test_model_is_multimodel_triton_on_the_release_mme_prefix(dev: Any) -> None:
    container = dev.one(MODEL).inputs["primaryContainer"]
    assert container["mode"] == "MultiModel"
    assert container["modelDataUrl"] == dev.outputs["releaseUrl"] + "/mme/"
    assert re.fullmatch(
        r"\d{12}\.dkr\.ecr\.us-east-1\.amazonaws\.com/sagemaker-tritonserver:"
        + re.escape(default_sagemaker_triton_version())
        + "-py3",
        container["image"],
    )
    assert container["environment"]["SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT"] == "0.9"
    variant = dev.one(ENDPOINT_CONFIG).inputs["productionVariants"][0]
    assert variant["instanceType"] == "ml.g4dn.xlarge"
    assert variant["initialInstanceCount"] == 1
    assert variant["variantName"] == "AllTraffic"


def test_created_bucket_is_private_encrypted_versioned(dev: Any) -> None:
    block = dev.one("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock").inputs
    assert all(
        block[k] is True
        for k in (
            "blockPublicAcls",
            "blockPublicPolicy",
            "ignorePublicAcls",
            "restrictPublicBuckets",
        )
    )
    versioning = dev.one("aws:s3/bucketVersioning:BucketVersioning").inputs
    assert versioning["versioningConfiguration"]["status"] == "Enabled"
    sse = dev.one(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
    ).inputs
    assert sse["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "AES256"
    bucket = dev.one(BUCKET).inputs
    assert "acl" not in bucket and "policy" not in bucket
    policy = json.loads(dev.one("aws:s3/bucketPolicy:BucketPolicy").inputs["policy"])
    assert [s["Effect"] for s in policy["Statement"]] == ["Deny"]
    assert re.fullmatch(
        r"s3://tdk-sagemaker-dev-releases-[^/]+/releases/r1", dev.outputs["releaseUrl"]
    )


def test_new_release_prefix_changes_only_the_model_data(stack_runner: Callable[..., Any]) -> None:
    run = stack_runner(STACK, {"sagemakerReleasePrefix": "releases/r2"})
    [bucket] = run.of_type(BUCKET)
    assert bucket.name == "tdk-sagemaker-dev-releases"  # same bucket, not a new one
    url = run.one(MODEL).inputs["primaryContainer"]["modelDataUrl"]
    assert url.endswith("/releases/r2/mme/")
    statements = _policy_statements(run)
    assert any(str(s["Resource"]).endswith("/releases/r2/mme/*") for s in statements)


def test_role_reads_only_the_release_prefix(existing_release: Any) -> None:
    statements = _policy_statements(existing_release)
    by_action = {json.dumps(s["Action"]): s for s in statements}
    get = by_action['"s3:GetObject"']
    assert get["Resource"] == "arn:aws:s3:::team-models/releases/v7/mme/*"
    listing = by_action['"s3:ListBucket"']
    assert listing["Resource"] == "arn:aws:s3:::team-models"
    assert listing["Condition"]["StringLike"]["s3:prefix"] == [
        "releases/v7/mme/",
        "releases/v7/mme/*",
    ]
    for statement in statements:
        actions = (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
        assert not any(a in ("*", "s3:*") or a.endswith(":*") for a in actions)
        if any(a.startswith("s3:") for a in actions):
            assert statement["Resource"] != "*"
    wildcard = sorted(json.dumps(s["Action"]) for s in statements if s["Resource"] == "*")
    assert wildcard == ['"cloudwatch:PutMetricData"', '"ecr:GetAuthorizationToken"']


def test_existing_release_declares_no_bucket(existing_release: Any) -> None:
    assert BUCKET not in existing_release.types()
    container = existing_release.one(MODEL).inputs["primaryContainer"]
    assert container["modelDataUrl"] == "s3://team-models/releases/v7/mme/"
    assert existing_release.outputs["releaseUrl"] == "s3://team-models/releases/v7"


def test_scaling_bounds_and_policies(dev: Any, existing_release: Any) -> None:
    target = dev.one(TARGET).inputs
    assert (target["minCapacity"], target["maxCapacity"]) == (1, 2)
    assert target["resourceId"] == "endpoint/tdk-sagemaker-dev/variant/AllTraffic"
    assert target["scalableDimension"] == "sagemaker:variant:DesiredInstanceCount"
    [invocations] = dev.of_type(POLICY)
    tracking = invocations.inputs["targetTrackingScalingPolicyConfiguration"]
    predefined = tracking["predefinedMetricSpecification"]["predefinedMetricType"]
    assert predefined == "SageMakerVariantInvocationsPerInstance"
    assert (tracking["scaleInCooldown"], tracking["scaleOutCooldown"]) == (600, 120)
    gpu = [p for p in existing_release.of_type(POLICY) if p.name.endswith("-gpu")]
    custom = gpu[0].inputs["targetTrackingScalingPolicyConfiguration"]
    spec = custom["customizedMetricSpecification"]
    assert (spec["metricName"], spec["namespace"]) == ("GPUUtilization", "/aws/sagemaker/Endpoints")
    assert custom["targetValue"] == 70


def test_rollout_is_blue_green_rolled_back_by_the_stack_alarms(dev: Any) -> None:
    deployment = dev.one(ENDPOINT).inputs["deploymentConfig"]
    routing = deployment["blueGreenUpdatePolicy"]["trafficRoutingConfiguration"]
    assert routing["type"] == "CANARY" and routing["canarySize"]["value"] == 20
    rollback = {a["alarmName"] for a in deployment["autoRollbackConfiguration"]["alarms"]}
    alarms = {a.inputs["name"]: a.inputs for a in dev.of_type(ALARM)}
    assert rollback == {"tdk-sagemaker-dev-5xx-rate", "tdk-sagemaker-dev-p99-latency"}
    assert rollback <= set(alarms)
    assert alarms["tdk-sagemaker-dev-p99-latency"]["threshold"] == 500_000  # 500 ms in µs
    assert {"tdk-sagemaker-dev-gpu-memory", "tdk-sagemaker-dev-disk"} <= set(alarms)
    assert "tdk-sagemaker-dev-cache-hit-rate" in alarms


def test_alarm_email_adds_a_topic_every_alarm_notifies(existing_release: Any) -> None:
    subscription = existing_release.one("aws:sns/topicSubscription:TopicSubscription").inputs
    assert subscription["protocol"] == "email"
    assert subscription["endpoint"] == "oncall@example.com"
    for alarm in existing_release.of_type(ALARM):
        assert alarm.inputs["alarmActions"] == [subscription["topic"]]


def test_outputs_name_the_endpoint_and_the_invoke_command(dev: Any) -> None:
    outputs = dev.outputs
    assert outputs["endpointName"] == "tdk-sagemaker-dev"
    assert outputs["region"] == "us-east-1"
    assert outputs["dashboardUrl"].endswith("#dashboards:name=tdk-sagemaker-dev")
    assert outputs["invokeCommand"].startswith(
        "tdk invoke --target sagemaker --endpoint tdk-sagemaker-dev --region us-east-1 "
        f"--release {outputs['releaseUrl']} --target-model "
    )


def test_cpu_instance_gets_the_cpu_image_and_no_gpu_alarm(stack_runner: Callable[..., Any]) -> None:
    run = stack_runner(STACK, {"sagemakerInstanceType": "ml.c5.2xlarge"})
    container = run.one(MODEL).inputs["primaryContainer"]
    assert container["image"].endswith("-cpu")
    assert "SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT" not in container["environment"]
    assert not any(a.inputs["name"].endswith("gpu-memory") for a in run.of_type(ALARM))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"sagemakerInstanceType": "ml.g5.12xlarge"}, "4 GPUs"),
        ({"aws:region": "mars-east-1"}, "us-east-1"),
        ({"releaseUrl": "https://bucket/x"}, "s3://"),
        ({"sagemakerMinInstances": 3, "sagemakerMaxInstances": 2}, "greater than"),
        ({"target": "mars"}, f"valid choices: {', '.join(deployable_targets())}"),
        ({"sagemakerReleasePrefix": "a/../b"}, "without . or .."),
        ({"sagemakerRolloutStrategy": "YOLO"}, "ALL_AT_ONCE, CANARY, LINEAR"),
        ({"sagemakerTritonVersion": "9.99"}, "24.09"),
        ({"alertEmail": "oncall"}, "not an email address"),
        ({"sagemakerMinInstances": 0}, "must be >= 1"),
    ],
)
def test_bad_config_fails_before_any_resource(
    stack_runner: Callable[..., Any], overrides: dict[str, Any], expected: str
) -> None:
    run = stack_runner(STACK, overrides, expect_error=True)
    assert isinstance(run.error, ConfigError)
    assert expected in str(run.error)
    assert run.resources == []


@pytest.mark.parametrize(
    ("strategy", "step", "field"),
    [("CANARY", 51, "CanarySize"), ("LINEAR", 9, "LinearStepSize"),
     ("LINEAR", 60, "LinearStepSize")],
)  # fmt: skip
def test_rollout_steps_outside_sagemakers_bounds_are_refused_up_front(
    strategy: str, step: int, field: str
) -> None:
    run = run_stack(
        "sagemaker-dev",
        overrides={"sagemakerRolloutStrategy": strategy, "sagemakerRolloutStepPercent": step},
        expect_error=True,
    )
    assert isinstance(run.error, ConfigError)
    assert field in run.error.message and "sagemakerRolloutStepPercent" in run.error.message
    assert not run.resources


@pytest.mark.parametrize(
    ("strategy", "step"), [("CANARY", 50), ("LINEAR", 10), ("LINEAR", 50), ("ALL_AT_ONCE", 100)]
)
def test_rollout_steps_at_sagemakers_bounds_are_accepted(strategy: str, step: int) -> None:
    run = run_stack(
        "sagemaker-dev",
        overrides={"sagemakerRolloutStrategy": strategy, "sagemakerRolloutStepPercent": step},
    )
    assert run.of_type("aws:sagemaker/endpoint:Endpoint")
