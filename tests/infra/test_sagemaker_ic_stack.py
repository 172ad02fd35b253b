"""The real Pulumi program under mocks with Pulumi.sagemaker-ic-dev.yaml; every request the
providers would send is validated against botocore's service model (moto lacks components)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from infra.targets.sagemaker_ic import requests
from infra.targets.sagemaker_ic.target import AMI_VERSIONS
from tdk.errors import ConfigError
from tests.infra.ic_release import release_holding, upload_release
from tests.infra.pulumi_harness import Declared, StackRun, run_stack

STACK = "sagemaker-ic-dev"
COMPONENT = "aws-native:sagemaker:InferenceComponent"
ENDPOINT_CONFIG = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
MODEL = "aws:sagemaker/model:Model"
TARGET = "aws:appautoscaling/target:Target"
POLICY = "aws:appautoscaling/policy:Policy"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
SESSION = botocore.session.get_session()
#: ARNs the mock engine makes up (not ours to check against ARN patterns)
MOCK = "arn:aws:mock:"


def valid(service: str, operation: str, request: dict[str, Any]) -> dict[str, Any]:
    """``request`` when botocore accepts it for ``operation``, with the names checked against
    the shapes' patterns and lengths (ParamValidator checks types, required, ranges only)."""
    model = SESSION.get_service_model(service).operation_model(operation)
    report = ParamValidator().validate(request, model.input_shape)
    assert not report.has_errors(), f"{operation}: {report.generate_report()}\n{request}"
    _check_patterns(model.input_shape, request, operation)
    return request


def _check_patterns(shape: Any, value: Any, where: str) -> None:
    if shape.type_name == "structure":
        for name, member in shape.members.items():
            if name in value:
                _check_patterns(member, value[name], f"{where}.{name}")
    elif shape.type_name == "list":
        for item in value:
            _check_patterns(shape.member, item, f"{where}[]")
    elif shape.type_name == "string" and isinstance(value, str) and not value.startswith(MOCK):
        meta = shape.metadata
        assert len(value) <= meta.get("max", len(value)), f"{where}: {value!r} too long"
        pattern = _python_pattern(meta.get("pattern"))
        if pattern is not None:
            assert pattern.fullmatch(value), f"{where}: {value!r} !~ {pattern.pattern}"


def _python_pattern(pattern: str | None) -> re.Pattern[str] | None:
    """The shape's pattern, or None for the Java-only ones (\\p{L}, \\u escapes)."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error:
        return None


@pytest.fixture(scope="module")
def dev(
    stack_runner: Callable[..., StackRun],
    sample_repo: Path,
    tmp_path_factory: pytest.TempPathFactory,
    _moto_server: str,
) -> StackRun:
    """The committed stack once its copies are published (the walk-through's second up)."""
    local = tmp_path_factory.mktemp("release")
    release_holding(sample_repo, local)
    with pytest.MonkeyPatch.context() as env:  # moto_endpoint's, for the whole module
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            env.setenv(key, "testing")
        env.setenv("AWS_DEFAULT_REGION", "us-east-1")
        env.setenv("AWS_ENDPOINT_URL", _moto_server)
        return stack_runner(STACK, {"releaseUrl": upload_release(local)})


def _published(
    tmp_path: Path, sample_repo: Path, upload: Callable[[Path], str], *copies: str
) -> dict[str, Any]:
    """Overrides serving ``copies`` from a release in S3 (moto) that holds them."""
    release_holding(sample_repo, tmp_path / "release", *copies)
    groups = [{"copies": list(copies), "sizeMb": 1}]
    return {"sagemakerIcModels": groups, "releaseUrl": upload(tmp_path / "release")}


def test_dev_stack_declares_components_with_reservations(dev: StackRun) -> None:
    components = dev.of_type(COMPONENT)
    assert len(components) >= 2
    for component in components:
        request = valid(
            "sagemaker", "CreateInferenceComponent", requests.create_inference_component(
                component.inputs
            )
        )  # fmt: skip
        needs = request["Specification"]["ComputeResourceRequirements"]
        assert needs["NumberOfAcceleratorDevicesRequired"] >= 1
        assert needs["MinMemoryRequiredInMb"] >= 1024
        assert request["RuntimeConfig"]["CopyCount"] >= 1  # AWS: one copy or more at create
        assert request["VariantName"] == "AllTraffic"
        batch = component.inputs["deploymentConfig"]["rollingUpdatePolicy"]["maximumBatchSize"]
        assert batch["type"] == "CAPACITY_PERCENT" and 5 <= batch["value"] <= 50


def test_each_component_runs_triton_on_its_own_archive(dev: StackRun) -> None:
    for model in dev.of_type(MODEL):
        valid("sagemaker", "CreateModel", requests.create_model(model.inputs, model.name))
    models = {m.name: m.inputs["primaryContainer"] for m in dev.of_type(MODEL)}
    release = dev.outputs["releaseUrl"]
    for component in dev.of_type(COMPONENT):
        container = models[component.name]
        copy = container["environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"]
        assert container["modelDataUrl"] == f"{release}/mme/{copy}.tar.gz"
        assert container["mode"] == "SingleModel"
        assert "sagemaker-tritonserver" in container["image"]
        assert (
            dev.outputs["inferenceComponents"][copy] == component.inputs["inferenceComponentName"]
        )


def test_endpoint_variant_has_no_model_and_managed_scaling(dev: StackRun) -> None:
    config = dev.one(ENDPOINT_CONFIG)
    request = valid(
        "sagemaker", "CreateEndpointConfig", requests.create_endpoint_config(
            config.inputs, config.name
        )
    )  # fmt: skip
    assert request["ExecutionRoleArn"]
    for variant in request["ProductionVariants"]:
        assert "ModelName" not in variant
        assert variant["ManagedInstanceScaling"]["Status"] == "ENABLED"
        assert variant["ManagedInstanceScaling"]["MinInstanceCount"] == 0
        assert variant["RoutingConfig"]["RoutingStrategy"] == "LEAST_OUTSTANDING_REQUESTS"
        assert variant["InferenceAmiVersion"] in AMI_VERSIONS


def _by_resource_id(run: StackRun, kind: str) -> dict[str, list[Declared]]:
    found: dict[str, list[Declared]] = {}
    for resource in run.of_type(kind):
        found.setdefault(resource.inputs["resourceId"], []).append(resource)
    return found


def test_one_copy_count_target_per_component(dev: StackRun) -> None:
    targets = _by_resource_id(dev, TARGET)
    names = [c.inputs["inferenceComponentName"] for c in dev.of_type(COMPONENT)]
    assert sorted(targets) == sorted(f"inference-component/{n}" for n in names)
    for (target,) in targets.values():
        request = valid(
            "application-autoscaling", "RegisterScalableTarget",
            requests.register_scalable_target(target.inputs),
        )  # fmt: skip
        assert request["ScalableDimension"] == "sagemaker:inference-component:DesiredCopyCount"
    for policy in dev.of_type(POLICY):
        valid("application-autoscaling", "PutScalingPolicy",
              requests.put_scaling_policy(policy.inputs, policy.name))  # fmt: skip


def test_scale_to_zero_components_wake_on_no_capacity(dev: StackRun) -> None:
    policies = _by_resource_id(dev, POLICY)
    alarms = {a.inputs["name"]: a.inputs for a in dev.of_type(ALARM)}
    for target in dev.of_type(TARGET):
        kinds = {p.inputs["policyType"]: p for p in policies[target.inputs["resourceId"]]}
        tracking = kinds["TargetTrackingScaling"].inputs
        metric = tracking["targetTrackingScalingPolicyConfiguration"]
        assert metric["predefinedMetricSpecification"]["predefinedMetricType"] == (
            "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
        )
        component = target.inputs["resourceId"].removeprefix("inference-component/")
        wake = [a for a in alarms.values() if a.get("metricName") == "NoCapacityInvocationFailures"
                and a.get("dimensions") == {"InferenceComponentName": component}]  # fmt: skip
        if target.inputs["minCapacity"] == 0:
            step = kinds["StepScaling"]
            assert len(wake) == 1
            assert wake[0]["alarmActions"] == [f"arn:aws:mock:::policy/{step.name}"]
            adjustment = step.inputs["stepScalingPolicyConfiguration"]["stepAdjustments"][0]
            assert adjustment["scalingAdjustment"] == 1
        else:
            assert "StepScaling" not in kinds and not wake
    assert any(t.inputs["minCapacity"] == 0 for t in dev.of_type(TARGET))


def test_every_alarm_is_a_valid_put_metric_alarm(dev: StackRun) -> None:
    alarms = dev.of_type(ALARM)
    components = {c.inputs["inferenceComponentName"] for c in dev.of_type(COMPONENT)}
    watched = {(a.inputs.get("dimensions") or {}).get("InferenceComponentName") for a in alarms}
    assert components and components <= watched  # no alarms at all passed before
    for alarm in alarms:
        valid("cloudwatch", "PutMetricAlarm", requests.put_metric_alarm(alarm.inputs))


@pytest.mark.parametrize(("low", "initial", "high"), [(0, 1, 1), (0, 1, 40), (1, 2, 4)])
def test_updates_roll_back_on_the_components_own_alarms(
    tmp_path: Path,
    sample_repo: Path,
    low: int,
    initial: int,
    high: int,
    s3_release: Callable[[Path], str],
) -> None:
    """MaximumBatchSize is a share of the copies (CAPACITY_PERCENT, 5-50 %: botocore's shape
    docs), so it stays valid at any count autoscaling reaches (0, 1, 40); a COPY_COUNT from
    initialCopies was invalid there. Every component gets the rollback alarms the docs promise."""
    run = run_stack(
        STACK,
        {"sagemakerIcMinCopies": low, "sagemakerIcInitialCopies": initial,
         "sagemakerIcMaxCopies": high, "sagemakerIcMaxInstances": 40 * 3,
         **_published(tmp_path, sample_repo, s3_release, "m-0")},
    )  # fmt: skip
    alarms = {a.inputs["name"] for a in run.of_type(ALARM)}
    (component,) = run.of_type(COMPONENT)
    valid("sagemaker", "UpdateInferenceComponent", requests.update_deployment_config(
        component.inputs
    ))  # fmt: skip
    config = component.inputs["deploymentConfig"]
    names = [a["alarmName"] for a in config["autoRollbackConfiguration"]["alarms"]]
    assert names and set(names) <= alarms
    assert all(component.inputs["inferenceComponentName"] in n for n in names)
    size = config["rollingUpdatePolicy"]["maximumBatchSize"]
    assert size == {"type": "CAPACITY_PERCENT", "value": 50}
    assert SESSION.get_service_model("sagemaker").shape_for(
        "InferenceComponentCapacitySizeType"
    ).enum == ["COPY_COUNT", "CAPACITY_PERCENT"]
    # the installed provider's schema (what `pulumi up` sends through) has the value too
    from pulumi_aws_native.sagemaker import InferenceComponentCapacitySizeType

    assert size["type"] in {e.value for e in InferenceComponentCapacitySizeType}


@pytest.mark.parametrize("percent", [4, 51])
def test_a_batch_share_outside_5_to_50_percent_is_refused(percent: int) -> None:
    run = run_stack(STACK, {"sagemakerIcRollingBatchPercent": percent}, expect_error=True)
    assert isinstance(run.error, ConfigError)
    assert "sagemakerIcRollingBatchPercent" in str(run.error)


def test_a_one_copy_component_rolls_back_on_its_alarms(dev: StackRun) -> None:
    """With the default initialCopies of 1, every component still gets a DeploymentConfig."""
    components = dev.of_type(COMPONENT)
    assert components
    for component in components:
        assert component.inputs["runtimeConfig"]["copyCount"] == 1
        rollback = component.inputs["deploymentConfig"]["autoRollbackConfiguration"]
        assert rollback["alarms"]


def test_the_no_capacity_alarm_period_is_awss_60_seconds(dev: StackRun) -> None:
    wake = [a for a in dev.of_type(ALARM)
            if a.inputs.get("metricName") == "NoCapacityInvocationFailures"]  # fmt: skip
    assert wake and all(a.inputs["period"] == 60 for a in wake)


def test_dashboard_has_a_row_per_component(dev: StackRun) -> None:
    body = json.loads(dev.one("aws:cloudwatch/dashboard:Dashboard").inputs["dashboardBody"])
    titles = " ".join(w["properties"]["title"] for w in body["widgets"])
    for component in dev.of_type(COMPONENT):
        assert component.inputs["inferenceComponentName"] + ":" in titles


def test_long_copy_names_keep_model_names_within_63_characters(
    tmp_path: Path, sample_repo: Path, s3_release: Callable[[Path], str]
) -> None:
    copy = "a_very_long_model_name_for_a_text_pipeline_with_many_parts-0"
    run = run_stack(STACK, _published(tmp_path, sample_repo, s3_release, copy))
    (model,) = run.of_type(MODEL)
    valid("sagemaker", "CreateModel", requests.create_model(model.inputs, model.name))
    (component,) = run.of_type(COMPONENT)
    assert component.inputs["inferenceComponentName"] == copy.replace("_", "-")


def test_ami_versions_are_botocores() -> None:
    shape = SESSION.get_service_model("sagemaker").shape_for("ProductionVariantInferenceAmiVersion")
    assert set(AMI_VERSIONS) <= set(shape.enum)


def test_manifest_of_a_published_release_lists_the_components(
    tmp_path: Path, sample_repo: Path, s3_release: Callable[[Path], str]
) -> None:
    from packager.manifest import Manifest
    from tests.local.local_helpers import make_release

    manifest: Manifest = make_release(sample_repo, tmp_path, copies=2)
    source = {"sagemakerIcModels": [], "releaseUrl": s3_release(tmp_path)}
    run = run_stack(STACK, {**source, "sagemakerIcMaxInstances": len(manifest.models)})
    declared = {c.inputs["inferenceComponentName"] for c in run.of_type(COMPONENT)}
    assert declared == {m.name.replace("_", "-") for m in manifest.models}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"sagemakerIcModels": [{"copies": ["a_b-0", "a-b-0"], "sizeMb": 1}]}, "both become"),
        ({"sagemakerIcModels": [{"copies": ["bert-0"]}]}, "sizeMb"),
        ({"sagemakerIcModels": [{"copies": ["bert-0"], "sizeMb": 1, "gpus": 1}]}, "gpus"),
        ({"sagemakerIcModels": [{"copies": ["big-0"], "sizeMb": 40000}]}, "GPUs but"),
        ({"sagemakerIcInstanceType": "ml.inf2.xlarge"}, "Inferentia"),
        ({"sagemakerIcMinCopies": 3}, "minCopies"),
        ({"sagemakerIcInitialCopies": 0}, "sagemakerIcInitialCopies"),
        (
            {"sagemakerIcModels": [{"copies": ["m-0"], "sizeMb": 1, "initialCopies": 0}]},
            "initialCopies >= 1",
        ),
        # the one feasibility path: 3 copies of 1 GPU each created on at most 2 x 1 GPU
        ({"sagemakerIcMaxInstances": 2}, "at creation (initialCopies): 3 copies"),
        ({"sagemakerIcInferenceAmiVersion": "al2-ami-sagemaker-inference-neuron-2"}, "AMI"),
    ],
)
def test_bad_config_is_refused_before_any_resource(overrides: dict[str, Any], message: str) -> None:
    run = run_stack(STACK, overrides, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert message in str(run.error)
    assert run.error.hint
    assert not run.of_type(COMPONENT)


def test_an_unpublished_manifest_url_declares_no_component(
    tmp_path: Path, s3_release: Callable[[Path], str]
) -> None:
    """A named release with no manifest yet: nothing is declared, the next step is said."""
    url = s3_release(tmp_path)  # an empty directory: nothing published
    run = run_stack(STACK, {"sagemakerIcModels": [], "releaseUrl": url})
    assert not run.of_type(COMPONENT) and not run.of_type(MODEL)
    assert (
        run.outputs["nextStep"] == f"tdk package MODEL_REPO --release {url} && pulumi up -s {STACK}"
    )


def test_an_unreadable_manifest_url_names_the_key() -> None:
    run = run_stack(
        STACK,
        {"sagemakerIcModels": [], "sagemakerIcManifestUrl": "file://elsewhere/releases/r1"},
        expect_error=True,
    )
    assert isinstance(run.error, ConfigError)
    assert "sagemakerIcManifestUrl" in str(run.error)
