"""Application Auto Scaling for an MME variant: bounds and target-tracking policies as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.clouds.aws.sagemaker.metrics import INSTANCE_NAMESPACE, VARIANT_NAME

SERVICE_NAMESPACE = "sagemaker"
SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"


@dataclass(frozen=True)
class ScalingSettings:
    """Instance bounds and the target-tracking settings from the stack config."""

    min_instances: int
    max_instances: int
    invocations_per_instance: int
    #: None: no GPUUtilization policy
    gpu_utilization_target: int | None
    scale_in_cooldown: int
    scale_out_cooldown: int


def resource_id(endpoint: str, variant: str = VARIANT_NAME) -> str:
    """Application Auto Scaling's id of an endpoint variant."""
    return f"endpoint/{endpoint}/variant/{variant}"


def scalable_target(endpoint: str, settings: ScalingSettings) -> dict[str, Any]:
    """``aws.appautoscaling.Target`` keyword arguments."""
    return {
        "service_namespace": SERVICE_NAMESPACE,
        "scalable_dimension": SCALABLE_DIMENSION,
        "resource_id": resource_id(endpoint),
        "min_capacity": settings.min_instances,
        "max_capacity": settings.max_instances,
    }


def _tracking(target_value: float, settings: ScalingSettings, **metric: Any) -> dict[str, Any]:
    return {
        "target_value": target_value,
        "scale_in_cooldown": settings.scale_in_cooldown,
        "scale_out_cooldown": settings.scale_out_cooldown,
        **metric,
    }


def scaling_policies(endpoint: str, settings: ScalingSettings) -> dict[str, dict[str, Any]]:
    """Target-tracking configurations by policy suffix (``invocations``, optional ``gpu``)."""
    policies = {
        "invocations": _tracking(
            float(settings.invocations_per_instance),
            settings,
            predefined_metric_specification={
                "predefined_metric_type": "SageMakerVariantInvocationsPerInstance"
            },
        )
    }
    if settings.gpu_utilization_target is not None:
        policies["gpu"] = _tracking(
            float(settings.gpu_utilization_target),
            settings,
            customized_metric_specification={
                "metric_name": "GPUUtilization",
                "namespace": INSTANCE_NAMESPACE,
                "statistic": "Average",
                "unit": "Percent",
                "dimensions": [
                    {"name": "EndpointName", "value": endpoint},
                    {"name": "VariantName", "value": VARIANT_NAME},
                ],
            },
        )
    return policies
