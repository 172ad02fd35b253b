"""Pure builders of the SageMaker target and the config reader, tested without Pulumi."""

from __future__ import annotations

import json

import pytest

from infra.clouds.aws.sagemaker.env import TritonKnobs, container_environment
from infra.clouds.aws.sagemaker.iam import execution_policy, image_repository_arn
from infra.clouds.aws.sagemaker.instances import classify_instance, single_gpu_types
from infra.clouds.aws.sagemaker.metrics import METRICS
from infra.clouds.aws.sagemaker.monitoring import AlarmThresholds, alarm_specs, dashboard_body
from infra.clouds.aws.sagemaker.release_bucket import bucket_prefix
from infra.config import ConfigReader, ReleaseLocation, parse_release_url
from infra.targets.sagemaker.rollout import Rollout, deployment_config
from infra.targets.sagemaker.scaling import ScalingSettings, scaling_policies
from tdk.errors import ConfigError

THRESHOLDS = AlarmThresholds(
    latency_slo_ms=250, error_rate_percent=1, gpu_memory_percent=90, disk_percent=80,
    cache_hit_percent=40,
)  # fmt: skip


def test_dashboard_json_is_bound_to_the_endpoint_variant_and_region() -> None:
    body = json.loads(json.dumps(dashboard_body("ep-a", "eu-west-1", THRESHOLDS)))
    lines = [line for w in body["widgets"] for line in w["properties"]["metrics"]]
    assert {(line[0], line[1]) for line in lines} == {(m.namespace, m.name) for m in METRICS}
    for line in lines:
        assert line[2:6] == ["EndpointName", "ep-a", "VariantName", "AllTraffic"]
    assert {w["properties"]["region"] for w in body["widgets"]} == {"eu-west-1"}
    latency = next(w for w in body["widgets"] if w["properties"]["title"] == "Latency")
    assert latency["properties"]["annotations"]["horizontal"][0]["value"] == 250_000
    stats = {(line[1], line[6]["stat"]) for line in lines}
    assert {("ModelLatency", "p50"), ("ModelLatency", "p99")} <= stats
    positions = {(w["x"], w["y"]) for w in body["widgets"]}
    assert len(positions) == len(body["widgets"])  # no two widgets on top of each other


def test_alarms_rollback_set_and_gpu_only_on_gpu() -> None:
    gpu = {a.key: a for a in alarm_specs("ep", THRESHOLDS, gpu=True)}
    cpu = {a.key for a in alarm_specs("ep", THRESHOLDS, gpu=False)}
    assert {k for k, a in gpu.items() if a.rollback} == {"5xx-rate", "p99-latency"}
    assert "gpu-memory" in gpu and "gpu-memory" not in cpu
    assert gpu["cache-hit-rate"].args["comparison_operator"] == "LessThanThreshold"
    assert gpu["cache-hit-rate"].args["threshold"] == 0.4
    expression = gpu["5xx-rate"].args["metric_queries"][-1]["expression"]
    assert "errors" in expression and "invocations" in expression


def test_execution_policy_at_bucket_root_and_in_china() -> None:
    image = "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/sagemaker-tritonserver:24.09-py3"
    doc = execution_policy(ReleaseLocation("s3", "models", ""), image, "cn-north-1", "ep")
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    assert by_sid["ReadReleaseArchives"]["Resource"] == "arn:aws-cn:s3:::models/mme/*"
    assert by_sid["PullTritonImage"]["Resource"] == (
        "arn:aws-cn:ecr:cn-north-1:727897471807:repository/sagemaker-tritonserver"
    )
    assert by_sid["WriteEndpointLogs"]["Resource"][0].endswith("/aws/sagemaker/Endpoints/ep")


@pytest.mark.parametrize("name", ["tdk", "tdk-sagemaker-dev", "a" * 26 + "-" + "b" * 13])
def test_bucket_prefix_fits_s3(name: str) -> None:
    prefix = bucket_prefix(name)
    assert len(prefix) <= 37 and prefix.endswith("-releases-")
    assert prefix[0].isalnum() and "--" not in prefix


def test_image_repository_arn() -> None:
    uri = "763104351884.dkr.ecr.us-west-2.amazonaws.com/sagemaker-tritonserver:24.09-py3-cpu"
    assert image_repository_arn(uri) == (
        "arn:aws:ecr:us-west-2:763104351884:repository/sagemaker-tritonserver"
    )


def test_container_environment_skips_unset_knobs() -> None:
    gpu = container_environment(TritonKnobs(2, 8, 4, 1 << 24, 1 << 20, 0.75))
    assert gpu["SAGEMAKER_TRITON_LOG_VERBOSE"] == "2"
    assert gpu["SAGEMAKER_TRITON_THREAD_COUNT"] == "8"
    assert gpu["SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT"] == "4"
    assert gpu["SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT"] == "0.75"
    cpu = container_environment(TritonKnobs(0, 0, 0, 1 << 24, 1 << 20, None))
    assert "SAGEMAKER_TRITON_THREAD_COUNT" not in cpu
    assert "SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT" not in cpu
    assert "SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT" not in cpu
    assert all(isinstance(v, str) for v in cpu.values())


@pytest.mark.parametrize(
    ("instance_type", "processor"),
    [("ml.g4dn.xlarge", "gpu"), ("ml.g5.16xlarge", "gpu"), ("ml.p3.2xlarge", "gpu"),
     ("ml.c5.large", "cpu"), ("ml.m5.4xlarge", "cpu"), ("ml.t2.medium", "cpu")],
)  # fmt: skip
def test_accepted_instance_types(instance_type: str, processor: str) -> None:
    assert classify_instance("sagemakerInstanceType", instance_type).processor == processor


@pytest.mark.parametrize("instance_type", ["ml.zz9.huge", "g4dn.xlarge", "ml.g5.12xlarge"])
def test_unknown_instance_types_list_the_choices(instance_type: str) -> None:
    with pytest.raises(ConfigError) as info:
        classify_instance("sagemakerInstanceType", instance_type)
    message = info.value.message
    assert "triton-deploy-kit:sagemakerInstanceType" in message
    assert all(choice in message for choice in single_gpu_types())


def test_scaling_policies_and_rollout_variants() -> None:
    settings = ScalingSettings(1, 4, 100, None, 300, 60)
    assert list(scaling_policies("ep", settings)) == ["invocations"]
    linear = deployment_config(Rollout("LINEAR", 25, 120), ["a"])
    routing = linear["blue_green_update_policy"]["traffic_routing_configuration"]
    assert routing["linear_step_size"] == {"type": "CAPACITY_PERCENT", "value": 25}
    at_once = deployment_config(Rollout("ALL_AT_ONCE", 25, 0), [])
    routing = at_once["blue_green_update_policy"]["traffic_routing_configuration"]
    assert set(routing) == {"type", "wait_interval_in_seconds"}


def _reader(values: dict[str, str]) -> ConfigReader:
    return ConfigReader(lambda key: values.get(key))


def test_config_reader_messages_name_the_key() -> None:
    reader = _reader({"triton-deploy-kit:n": "two", "triton-deploy-kit:b": "yes",
                      "triton-deploy-kit:o": "", "triton-deploy-kit:z": "0"})  # fmt: skip
    with pytest.raises(ConfigError, match="triton-deploy-kit:n must be an integer, got 'two'"):
        reader.integer("n")
    with pytest.raises(ConfigError, match="must be true or false"):
        reader.boolean("b")
    with pytest.raises(ConfigError, match="no value for triton-deploy-kit:missing"):
        reader.string("missing")
    assert reader.optional_string("o") is None
    assert reader.integer("z") == 0  # a configured 0 stays 0
    with pytest.raises(ConfigError, match="must be >= 1"):
        reader.integer("z", minimum=1)


@pytest.mark.parametrize(
    ("url", "problem"),
    [("gs://b/x", "scheme"), ("s3://B_/x", "bucket"), ("s3://bucket/a/../b", "path"),
     ("s3://bucket/x?y=1", "path"), ("bucket/x", "scheme")],
)  # fmt: skip
def test_malformed_release_urls(url: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_release_url("releaseUrl", url, ["s3"])


def test_release_url_parts() -> None:
    location = parse_release_url("releaseUrl", "s3://my-bucket/releases/v1/", ["s3"])
    assert (location.bucket, location.prefix) == ("my-bucket", "releases/v1")
    assert location.url == "s3://my-bucket/releases/v1"
    assert location.key("mme/") == "releases/v1/mme/"
