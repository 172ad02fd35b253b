"""Pure ARM arguments of the aks stack's Azure resources (no Pulumi, no Azure SDK): the node
pools, the cluster's profiles, the release reader's role condition (built with Azure's
``infra.clouds.azure.identity.only_under``), managed Prometheus' data collection rule and the
action group (the budget is Azure's: ``infra/clouds/azure/guardrails.py``). ``stack.py`` only
wires them.

Sources (read 2026-11-27):
- GPU pools: ``gpuProfile.driver`` ``Install`` (the default: AKS installs the NVIDIA driver)
  or ``None`` (azure-aks-docs ``aks-managed-gpu-nodes.md``, ``use-nvidia-gpu.md`` at fb060ab);
  a user pool autoscales to 0 nodes (``minCount: 0``, azure-aks-docs
  ``cluster-autoscaler.md``); taints ``key=value:Effect``.
- Workload identity: ``oidcIssuerProfile.enabled`` and ``securityProfile.workloadIdentity
  .enabled`` (learn.microsoft.com/azure/aks/workload-identity-deploy-cluster).
- Managed Prometheus: ``azureMonitorProfile.metrics.enabled``, a data collection endpoint and
  rule with a ``prometheusForwarder`` source (stream ``Microsoft-PrometheusMetrics``) sending to
  the Azure Monitor workspace, associated with the cluster
  (learn.microsoft.com/azure/azure-monitor/containers/kubernetes-monitoring-enable).
"""

from __future__ import annotations

from typing import Any

from infra.clouds.azure.identity import only_under
from infra.k8s.spec import (
    GPU_POOL,
    GPU_PRESENT_LABEL,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GPU_TAINT_VALUE,
    POOL_LABEL,
)
from infra.targets.aks.builders import BlobRelease
from infra.targets.aks.cloud_names import GPU_POOL as GPU_POOL_NAME
from infra.targets.aks.cloud_names import SYSTEM_POOL
from infra.targets.aks.config import AksConfig
from infra.values.guardrails import OPEN_TO_INTERNET
from packager.tensorrt.engines import ENGINES_PREFIX

#: AKS installs the NVIDIA driver on GPU nodes (the kit installs the pinned device plugin)
GPU_DRIVER = "Install"
PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"
#: the association name Azure's own onboarding gives managed Prometheus' rule
PROMETHEUS_ASSOCIATION = "ContainerInsightsMetricsExtension"
#: an action group's short name: at most 12 characters (the SMS/e-mail sender)
SHORT_NAME_LIMIT = 12


def system_pool(config: AksConfig) -> dict[str, Any]:
    """The untainted system pool (KEDA, system pods, CPU workloads), 1 to N nodes."""
    return {
        "name": SYSTEM_POOL,
        "mode": "System",
        "vm_size": config.system_vm_size,
        "count": 1,
        "enable_auto_scaling": True,
        "min_count": 1,
        "max_count": config.system_max_nodes,
        "os_type": "Linux",
        "os_sku": "Ubuntu",
        "type": "VirtualMachineScaleSets",
        "node_labels": {POOL_LABEL: "system"},
    }


def gpu_pool(config: AksConfig) -> dict[str, Any]:
    """The GPU user pool: tainted, labelled (for the kit and the device plugin), autoscaled
    between the stack's bounds (down to 0), the NVIDIA driver installed by AKS."""
    return {
        "agent_pool_name": GPU_POOL_NAME,
        "mode": "User",
        "vm_size": config.gpu_vm_size,
        "count": config.gpu_min_nodes,
        "enable_auto_scaling": True,
        "min_count": config.gpu_min_nodes,
        "max_count": config.gpu_max_nodes,
        "os_type": "Linux",
        "os_sku": "Ubuntu",
        "type": "VirtualMachineScaleSets",
        "orchestrator_version": config.kubernetes_version,
        # the pinned device plugin chart's default affinity (k8s/spec.py) must match the nodes
        "node_labels": {POOL_LABEL: GPU_POOL, GPU_PRESENT_LABEL: "true"},
        "node_taints": [f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}"],
        "gpu_profile": {"driver": GPU_DRIVER},
    }


def api_access(config: AksConfig) -> dict[str, Any] | None:
    """Who may reach the API server: the stack's ranges, or (opted in) anyone."""
    if config.api_authorized_ranges == OPEN_TO_INTERNET:
        return None
    return {"authorized_ip_ranges": list(config.api_authorized_ranges)}


def cluster_profiles(config: AksConfig) -> dict[str, Any]:
    """The managed cluster's arguments besides names and pools."""
    args: dict[str, Any] = {
        "kubernetes_version": config.kubernetes_version,
        "dns_prefix": config.common.name,
        "identity": {"type": "SystemAssigned"},
        "sku": {"name": "Base", "tier": "Free"},
        "enable_rbac": True,
        "oidc_issuer_profile": {"enabled": True},
        "security_profile": {"workload_identity": {"enabled": True}},
        "azure_monitor_profile": {"metrics": {"enabled": True}},
        "network_profile": {"network_plugin": "azure", "network_plugin_mode": "overlay"},
        "auto_upgrade_profile": {
            "upgrade_channel": "patch",
            "node_os_upgrade_channel": "NodeImage",
        },
    }
    access = api_access(config)
    if access is not None:
        args["api_server_access_profile"] = access
    return args


def release_read_condition(blob: BlobRelease) -> str | None:
    """Storage Blob Data Reader narrowed to reading and listing under the release prefix (None:
    a release at the container's root reads the whole container, the role's scope)."""
    return only_under(("read",), f"{blob.prefix}/") if blob.prefix else None


def engine_write_condition(blob: BlobRelease) -> str:
    """Storage Blob Data Contributor narrowed to the release's engine cache (``ENGINES_PREFIX``),
    where ``tdk build``'s Job writes TensorRT engines as the engine builder's identity, the only
    one granted it (eks grants its builder PutObject there alike): every data action of the role
    (read, list, write, create, delete, rename) only there. The earlier layout (``plans/``) is
    still read, with the release's read grant; nothing writes it."""
    actions = ("read", "write", "add/action", "delete", "move/action")
    return only_under(actions, blob.name(ENGINES_PREFIX))


def container_scope(subscription: str, resource_group: str, blob: BlobRelease) -> str:
    """The ARM id of the release's container (the reader's role scope)."""
    return (
        f"/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/"
        f"Microsoft.Storage/storageAccounts/{blob.account}/blobServices/default/containers/"
        f"{blob.container}"
    )


def prometheus_rule(endpoint_id: Any, workspace_id: Any) -> dict[str, Any]:
    """The data collection rule forwarding the cluster's scraped series to the workspace."""
    return {
        "data_collection_endpoint_id": endpoint_id,
        "kind": "Linux",
        "data_sources": {
            "prometheus_forwarder": [
                {"name": "PrometheusDataSource", "streams": [PROMETHEUS_STREAM]}
            ]
        },
        "destinations": {
            "monitoring_accounts": [{"account_resource_id": workspace_id, "name": "workspace"}]
        },
        "data_flows": [{"destinations": ["workspace"], "streams": [PROMETHEUS_STREAM]}],
    }


def action_group(name: str, email: str | None) -> dict[str, Any]:
    """The action group the alert rules notify: ``alertEmail`` when set."""
    receivers = [{"name": "alert-email", "email_address": email, "use_common_alert_schema": True}]
    return {
        "group_short_name": name[:SHORT_NAME_LIMIT],
        "enabled": True,
        "location": "global",
        "email_receivers": receivers if email else [],
    }
