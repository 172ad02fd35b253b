"""The names the aks target derives from a stack's ``name`` (``DERIVED``), with Azure's rules
(``infra.clouds.azure.names``), and its two fixed node pool names."""

from __future__ import annotations

from infra.clouds.azure.names import (
    ACTION_GROUP,
    AKS_CLUSTER,
    CONSUMPTION_BUDGET,
    MANAGED_IDENTITY,
    RESOURCE_GROUP,
)
from infra.values.names import K8S_SERVICE, DerivedName, derived

#: the two node pools' names (fixed: AKS node pool names cannot carry the stack's name)
SYSTEM_POOL = "system"
GPU_POOL = "gpu"
NODE_POOLS = (SYSTEM_POOL, GPU_POOL)

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(RESOURCE_GROUP, False, "{name}-rg"),
    *derived(AKS_CLUSTER, False, "{name}"),
    *derived(MANAGED_IDENTITY, False, "{name}-triton", "{name}-keda", "{name}-build"),
    *derived(CONSUMPTION_BUDGET, False, "{name}-monthly"),
    *derived(ACTION_GROUP, False, "{name}-alerts"),
    *derived(K8S_SERVICE, False, "{name}"),
)
# fmt: on
