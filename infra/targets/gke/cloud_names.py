"""The cloud names the gke target derives from the stack's ``name`` (checked by
``infra.values.names.check_name`` while the config is read)."""

from __future__ import annotations

from infra.clouds.gcp.names import (
    ARTIFACT_REGISTRY_REPOSITORY,
    GCE,
    GCP_SERVICE_ACCOUNT,
    GKE_CLUSTER,
    GKE_NODE_POOL,
)
from infra.values.names import K8S_SERVICE, DerivedName, derived

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(GKE_CLUSTER, False, "{name}"),
    *derived(GKE_NODE_POOL, True, "{name}-system", "{name}-gpu"),
    *derived(GCE, True, "{name}-vpc", "{name}-nodes", "{name}-router", "{name}-nat"),
    *derived(GCP_SERVICE_ACCOUNT, False, "{name}-triton", "{name}-nodes", "{name}-keda",
             "{name}-build"),
    *derived(ARTIFACT_REGISTRY_REPOSITORY, False, "{name}-front"),
    *derived(K8S_SERVICE, False, "{name}"),
)
# fmt: on
