"""The validated, frozen config of a sagemaker stack (no Pulumi, no cloud SDK)."""

from __future__ import annotations

from dataclasses import dataclass

from infra.clouds.aws.sagemaker.env import TritonKnobs
from infra.clouds.aws.sagemaker.instances import (
    InstanceKind,
)
from infra.clouds.aws.sagemaker.monitoring import AlarmThresholds
from infra.config import (
    StackConfig,
)
from infra.targets.sagemaker.rollout import Rollout
from infra.targets.sagemaker.scaling import ScalingSettings
from infra.values.guardrails import Budget


@dataclass(frozen=True)
class SageMakerConfig:
    """The validated config of a sagemaker stack."""

    common: StackConfig
    region: str
    instance: InstanceKind
    triton_version: str
    #: ProductionVariant.InferenceAmiVersion the image's CUDA needs (None on CPU instances)
    inference_ami_version: str | None
    knobs: TritonKnobs
    scaling: ScalingSettings
    thresholds: AlarmThresholds
    rollout: Rollout
    alarm_email: str | None
    #: release root inside the bucket the stack creates (used when common.release is None)
    created_release_prefix: str
    budget: Budget | None
    log_retention_days: int
