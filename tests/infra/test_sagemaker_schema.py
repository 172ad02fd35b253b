"""Nested dicts the builders hand to pulumi_aws use the provider's real argument names.

Pulumi checks top-level keyword arguments, but not the keys of nested dicts (mocks echo them
back unchanged), so each nested dict is walked against the ``...Args`` class pulumi_aws
declares for it.
"""

from __future__ import annotations

import inspect
import re
from types import ModuleType
from typing import Any

import pulumi_aws as aws
import pytest

from infra.clouds.aws.sagemaker.monitoring import AlarmThresholds, alarm_specs
from infra.targets.sagemaker.rollout import Rollout, deployment_config
from infra.targets.sagemaker.scaling import ScalingSettings, scalable_target, scaling_policies

_ARGS_CLASS = re.compile(r"ForwardRef\('(\w+Args)'\)")


def _params(callable_: Any) -> dict[str, inspect.Parameter]:
    return {
        name: p
        for name, p in inspect.signature(callable_).parameters.items()
        if name not in ("self", "__self__", "resource_name", "opts", "__props__")
    }


def assert_matches(module: ModuleType, params: dict[str, inspect.Parameter], data: Any) -> None:
    """Every key of ``data`` (recursively) is an argument of the Args class pulumi declares."""
    for given, value in data.items():
        # pulumi appends "_" to an argument that is a Python keyword or its own (for_,
        # resource_name_)
        key = given if given in params else f"{given}_"
        assert key in params, f"{given!r} is not one of {sorted(params)}"
        annotation = str(params[key].annotation)
        found = _ARGS_CLASS.search(annotation)
        if found is None and "Mapping[str" in annotation:
            continue  # a free-form map (tags, dimensions), not an Args object
        keyed = found and re.search(rf"Mapping\[str, [^\]]*'{found.group(1)}'", annotation)
        if keyed and isinstance(value, dict):
            value = list(value.values())  # a map of names to Args objects
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict):
                assert found, f"{key!r} takes no nested arguments"
                nested = getattr(module, found.group(1))
                assert_matches(module, _params(nested.__init__), item)


THRESHOLDS = AlarmThresholds(500, 2, 90, 85, 50)
SCALING = ScalingSettings(1, 3, 100, 70, 300, 60)


@pytest.mark.parametrize("strategy", ["ALL_AT_ONCE", "CANARY", "LINEAR"])
def test_deployment_config_uses_sagemaker_argument_names(strategy: str) -> None:
    config = deployment_config(Rollout(strategy, 10, 120), ["a", "b"])
    assert_matches(aws.sagemaker, _params(aws.sagemaker.EndpointDeploymentConfigArgs), config)


def test_scaling_uses_appautoscaling_argument_names() -> None:
    assert_matches(
        aws.appautoscaling,
        _params(aws.appautoscaling.Target._internal_init),
        scalable_target("ep", SCALING),
    )
    tracking_args = aws.appautoscaling.PolicyTargetTrackingScalingPolicyConfigurationArgs
    for tracking in scaling_policies("ep", SCALING).values():
        assert_matches(aws.appautoscaling, _params(tracking_args), tracking)


@pytest.mark.parametrize("gpu", [True, False])
def test_alarms_use_metric_alarm_argument_names(gpu: bool) -> None:
    for spec in alarm_specs("ep", THRESHOLDS, gpu=gpu):
        assert_matches(
            aws.cloudwatch, _params(aws.cloudwatch.MetricAlarm._internal_init), spec.args
        )


def test_walker_rejects_a_misspelt_nested_key() -> None:
    config = deployment_config(Rollout("CANARY", 10, 120), ["a"])
    config["blue_green_update_policy"]["traffic_routing_configuration"]["canary"] = {}
    with pytest.raises(AssertionError, match="'canary' is not one of"):
        assert_matches(aws.sagemaker, _params(aws.sagemaker.EndpointDeploymentConfigArgs), config)


def _snake(name: str) -> str:
    """camelCase to snake_case, an acronym one word (``authorizedIPRanges``:
    ``authorized_ip_ranges``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _snake_keys(data: Any) -> Any:
    if isinstance(data, dict):
        return {_snake(k): _snake_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_snake_keys(v) for v in data]
    return data


def test_every_declared_resource_uses_real_argument_names(stack_runner: Any) -> None:
    run = stack_runner("sagemaker-dev", {"sagemakerScaleOnGpu": True, "alertEmail": "a@b.c"})
    checked = 0
    for resource in run.resources:
        if not resource.type.startswith("aws:"):
            continue  # the component itself
        _, module_path, class_name = resource.type.split(":")
        module = getattr(aws, module_path.split("/")[0])
        inputs = {k: v for k, v in _snake_keys(resource.inputs).items() if k != "__defaults"}
        params = _params(getattr(module, class_name)._internal_init)
        assert_matches(module, params, inputs)
        checked += 1
    assert checked >= 20
