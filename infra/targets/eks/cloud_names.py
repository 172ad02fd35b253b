"""The cloud names the eks target derives from the stack's ``name`` (checked by
``infra.values.names.check_name`` while the config is read)."""

from __future__ import annotations

from infra.clouds.aws.names import (
    AMP_ALIAS,
    BUDGET,
    CW_NAME,
    EKS_CLUSTER,
    EKS_NODEGROUP,
    IAM_ROLE,
    LOG_GROUP,
    SNS_TOPIC,
)
from infra.targets.eks.entry import ENTRY
from infra.values.names import K8S_SERVICE, DerivedName, derived

TARGET = ENTRY.name

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(TARGET, EKS_CLUSTER, False, "{name}"),
    *derived(TARGET, EKS_NODEGROUP, True, "{name}-system", "{name}-gpu"),
    *derived(TARGET, IAM_ROLE, False, "{name}-triton-release-reader", "{name}-plan-builder"),
    *derived(
        TARGET,
        IAM_ROLE,
        True,
        "{name}-cluster",
        "{name}-nodes",
        "{name}-autoscaler",
        "{name}-keda",
        "{name}-monitoring-cw-agent",
    ),
    *derived(TARGET, AMP_ALIAS, False, "{name}-triton"),
    *derived(
        TARGET,
        CW_NAME,
        False,
        "{name}-triton",
        "{name}-triton-pods-below-minimum",
        "{name}-gpu-saturated",
        "{name}-failed-nodes",
    ),
    *derived(TARGET, SNS_TOPIC, True, "{name}-monitoring-alerts"),
    *derived(
        TARGET,
        LOG_GROUP,
        False,
        "/aws/eks/{name}/cluster",
        "/aws/containerinsights/{name}/performance",
        "/aws/containerinsights/{name}/application",
        "/aws/containerinsights/{name}/dataplane",
        "/aws/containerinsights/{name}/host",
    ),
    *derived(TARGET, BUDGET, False, "{name}-monthly"),
    *derived(TARGET, K8S_SERVICE, False, "{name}"),
)
# fmt: on
