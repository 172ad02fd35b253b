"""The cloud names the eks target derives from the stack's ``name`` (checked by
``infra.values.names.check_name`` while the config is read)."""

from __future__ import annotations

from infra.clouds.aws.names import (
    AMP_ALIAS,
    BUDGET,
    CW_NAME,
    ECR_REPOSITORY,
    EKS_CLUSTER,
    EKS_NODEGROUP,
    IAM_ROLE,
    LOG_GROUP,
    SNS_TOPIC,
)
from infra.config import qualify
from infra.k8s.config import FRONT_IMAGE_NAME
from infra.values.names import K8S_SERVICE, DerivedName, derived
from tdk.errors import ConfigError

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(EKS_CLUSTER, False, "{name}"),
    *derived(EKS_NODEGROUP, True, "{name}-system", "{name}-gpu"),
    # "-plan-builder": the build role's physical name, kept (a rename would replace the role)
    *derived(IAM_ROLE, False, "{name}-triton-release-reader", "{name}-plan-builder"),
    *derived(IAM_ROLE,
        True,
        "{name}-cluster",
        "{name}-nodes",
        "{name}-autoscaler",
        "{name}-keda",
        "{name}-monitoring-cw-agent",
    ),
    *derived(AMP_ALIAS, False, "{name}-triton"),
    *derived(CW_NAME,
        False,
        "{name}-triton",
        "{name}-triton-pods-below-minimum",
        "{name}-gpu-saturated",
        "{name}-failed-nodes",
    ),
    *derived(SNS_TOPIC, True, "{name}-monitoring-alerts"),
    *derived(LOG_GROUP,
        False,
        "/aws/eks/{name}/cluster",
        "/aws/containerinsights/{name}/performance",
        "/aws/containerinsights/{name}/application",
        "/aws/containerinsights/{name}/dataplane",
        "/aws/containerinsights/{name}/host",
    ),
    *derived(BUDGET, False, "{name}-monthly"),
    *derived(K8S_SERVICE, False, "{name}"),
)
# fmt: on


def front_repository(name: str) -> str:
    """``<name>/tdk-front`` in lowercase (ECR's rule, botocore ``ecr.RepositoryName``); a stack
    name the rule still refuses is a ConfigError naming the key."""
    repository = f"{name.lower()}/{FRONT_IMAGE_NAME}"
    if not ECR_REPOSITORY.accepts(repository):
        raise ConfigError(
            f"the front image repository {repository!r} derived from {qualify('name')} is not an "
            f"{ECR_REPOSITORY.kind} (at most {ECR_REPOSITORY.limit} characters matching "
            f"{ECR_REPOSITORY.pattern})",
            hint=f"use letters, digits and single hyphens in {qualify('name')}, or "
            f"`pulumi config set {qualify('k8sFrontImage')} <registry>/tdk-front:<tag>`",
        )
    return repository
