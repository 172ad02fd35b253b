"""Application Auto Scaling of inference components: copies per component, to and from zero.

Facts (checked 2026-11-24): ScalableDimension ``sagemaker:inference-component:DesiredCopyCount``
and PredefinedMetricType ``SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution``
are enum values of botocore's application-autoscaling service model (2016-02-06,
https://github.com/boto/botocore/blob/develop/botocore/data/application-autoscaling/2016-02-06/
service-2.json). Scale to zero and back: a step-scaling policy that adds a copy, driven by a
CloudWatch alarm on ``NoCapacityInvocationFailures`` (AWS/SageMaker, InferenceComponentName),
as https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html
describes.
"""

from __future__ import annotations

from typing import Any

from infra.targets.sagemaker_ic.config import ComponentSpec, IcScaling

SERVICE_NAMESPACE = "sagemaker"
SCALABLE_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
PREDEFINED_METRIC = "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
NO_CAPACITY_METRIC = "NoCapacityInvocationFailures"
INVOCATION_NAMESPACE = "AWS/SageMaker"
COMPONENT_DIMENSION = "InferenceComponentName"
#: the no-capacity alarm's period, as in AWS's scale-from-zero procedure (its put-metric-alarm
#: example: Period 60, one evaluation period, Sum >= 1; endpoint-auto-scaling-zero-instances,
#: checked 2026-11-26)
NO_CAPACITY_PERIOD_SECONDS = 60


def resource_id(component: str) -> str:
    """Application Auto Scaling's id of an inference component."""
    return f"inference-component/{component}"


def scalable_target(spec: ComponentSpec) -> dict[str, Any]:
    """``aws.appautoscaling.Target`` arguments: the component's copy-count bounds."""
    return {
        "service_namespace": SERVICE_NAMESPACE,
        "scalable_dimension": SCALABLE_DIMENSION,
        "resource_id": resource_id(spec.component),
        "min_capacity": spec.min_copies,
        "max_capacity": spec.max_copies,
    }


def tracking_policy(scaling: IcScaling) -> dict[str, Any]:
    """Target tracking on concurrent requests per copy (high-resolution metric)."""
    return {
        "target_value": float(scaling.concurrent_requests_per_copy),
        "scale_in_cooldown": scaling.scale_in_cooldown,
        "scale_out_cooldown": scaling.scale_out_cooldown,
        "predefined_metric_specification": {"predefined_metric_type": PREDEFINED_METRIC},
    }


def wake_policy(scaling: IcScaling) -> dict[str, Any]:
    """Step scaling that adds one copy whenever the no-capacity alarm fires."""
    return {
        "adjustment_type": "ChangeInCapacity",
        "metric_aggregation_type": "Maximum",
        "cooldown": scaling.scale_out_cooldown,
        "step_adjustments": [{"metric_interval_lower_bound": "0", "scaling_adjustment": 1}],
    }


def no_capacity_alarm(endpoint: str, spec: ComponentSpec) -> dict[str, Any]:
    """``aws.cloudwatch.MetricAlarm`` arguments (actions aside): a request found no copy."""
    return {
        "name": f"{endpoint}-{spec.component}-no-capacity",
        "alarm_description": f"requests to {spec.component} found no copy: add one",
        "namespace": INVOCATION_NAMESPACE,
        "metric_name": NO_CAPACITY_METRIC,
        "dimensions": {COMPONENT_DIMENSION: spec.component},
        "statistic": "Sum",
        "period": NO_CAPACITY_PERIOD_SECONDS,
        "evaluation_periods": 1,
        "datapoints_to_alarm": 1,
        "threshold": 1.0,
        "comparison_operator": "GreaterThanOrEqualToThreshold",
        "treat_missing_data": "missing",
    }
