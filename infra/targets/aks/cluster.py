"""``tdk:azure:AksCluster``: the resource group, the AKS cluster with its system pool, the
tainted GPU pool that scales to zero, and a Kubernetes provider on the cluster."""

from __future__ import annotations

import base64
from typing import Any, cast

import pulumi
import pulumi_azure_native as azure
import pulumi_kubernetes as k8s

from infra.facts import kubernetes as kf
from infra.k8s.addons_component import ChartArgs
from infra.k8s.refs import ClusterRef
from infra.k8s.spec import GPU_POOL, GPU_TAINT_EFFECT, GPU_TAINT_KEY, POOL_LABEL
from infra.targets.aks import arm
from infra.targets.aks.config import AksConfig


def _kubeconfig(encoded: str) -> str:
    return base64.b64decode(encoded).decode("utf-8")


class AksCluster(pulumi.ComponentResource):
    """The cluster (``cluster``), its GPU pool (``gpu_pool``), ``kubeconfig`` (secret), the
    provider and ``ref`` dependents use; ``device_plugin`` is the chart ``ClusterAddons``
    installs (AKS installs the driver, the kit the pinned NVIDIA device plugin)."""

    def __init__(
        self, name: str, config: AksConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:azure:AksCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.group = azure.resources.ResourceGroup(
            f"{name}-rg", resource_group_name=f"{name}-rg", location=config.location, opts=child
        )
        self.cluster = azure.containerservice.ManagedCluster(
            f"{name}-aks",
            resource_name_=name,
            resource_group_name=self.group.name,
            location=config.location,
            agent_pool_profiles=[cast(Any, arm.system_pool(config))],
            **arm.cluster_profiles(config),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["agentPoolProfiles[0].count"]),
        )
        self.gpu_pool = azure.containerservice.AgentPool(
            f"{name}-gpu",
            resource_group_name=self.group.name,
            resource_name_=self.cluster.name,
            **arm.gpu_pool(config),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["count"]),
        )
        credentials = azure.containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=self.group.name, resource_name=self.cluster.name
        )
        decoded: pulumi.Output[str] = credentials.kubeconfigs[0].value.apply(_kubeconfig)
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(decoded)
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.gpu_pool]),
        )
        self.ref = ClusterRef(
            name=self.cluster.name, kubeconfig=self.kubeconfig, provider=self.provider
        )
        self.oidc_issuer = self.cluster.oidc_issuer_profile.apply(
            lambda profile: profile.issuer_url if profile else ""
        )
        self.device_plugin = ChartArgs(
            kf.device_plugin_for(config.kubernetes_version).version,
            {
                "nodeSelector": {POOL_LABEL: GPU_POOL},
                "tolerations": [
                    {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": GPU_TAINT_EFFECT}
                ],
            },
        )
        self.register_outputs({"clusterName": self.cluster.name, "resourceGroup": self.group.name})
