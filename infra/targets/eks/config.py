"""The validated, frozen config of a eks stack (no Pulumi, no cloud SDK)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from infra.config import ReleaseLocation, StackConfig
from infra.k8s.config import WorkloadConfig, workload_spec
from infra.k8s.spec import ModelSync, PrometheusSource, TritonServiceSpec
from infra.targets.guardrails import Budget


@dataclass(frozen=True)
class EksConfig:
    """The validated config of an eks stack."""

    common: StackConfig
    release: ReleaseLocation
    region: str
    zones: tuple[str, ...]
    kubernetes_version: str
    gpu_instance_type: str
    gpu_min_nodes: int
    gpu_max_nodes: int
    spot: bool
    system_instance_type: str
    system_max_nodes: int
    public_access_cidrs: tuple[str, ...]
    workload: WorkloadConfig
    budget: Budget | None
    log_retention_days: int
    #: the AWS CLI image that copies the release into each pod (see ``ModelSync``)
    model_sync_image: str


def triton_spec(config: EksConfig, role_arn: Any, prometheus_url: Any) -> TritonServiceSpec:
    """The Triton workload of an eks stack.

    ``role_arn`` (Triton's IRSA role) and ``prometheus_url`` (the AMP query endpoint) are Pulumi
    outputs under ``pulumi up`` and strings under ``tdk render k8s``.
    """
    repository = f"{config.release.url}/repository"
    return workload_spec(
        config.workload,
        name=config.common.name,
        cloud="eks",
        model_repository=repository,
        model_sync=ModelSync(config.model_sync_image, repository),
        prometheus=PrometheusSource(cast(str, prometheus_url), "aws", config.region),
        identity_annotations={"eks.amazonaws.com/role-arn": role_arn},
        env={"AWS_REGION": config.region, "AWS_DEFAULT_REGION": config.region},
    )
