"""``tdk:gcp:GpuCluster``: a private GKE cluster with Workload Identity and a GPU node pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from infra.clouds.gcp import identity
from infra.k8s.refs import ClusterRef, PodIdentity
from infra.targets.gke import builders as b
from infra.targets.gke.config import GkeConfig


@dataclass
class GpuClusterArgs:
    """The stack's validated config (project/region, the GPU pool, the CPU system pool,
    control-plane access) and the enabled Google APIs every resource of the cluster waits for."""

    config: GkeConfig
    services: Sequence[pulumi.Resource] = field(default_factory=list)


class GpuCluster(pulumi.ComponentResource):
    """Network with Cloud NAT (private nodes pull images through it), the cluster, two pools,
    a node service account with only logging/monitoring/image-pull roles, and the Google
    identity KEDA reads Managed Prometheus as (``ClusterAddons`` installs KEDA itself)."""

    def __init__(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:gcp:GpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # resources that reference nothing else of the stack wait for the APIs explicitly;
        # every other one waits for them through its inputs
        root = pulumi.ResourceOptions(parent=self, depends_on=list(args.services))
        self._network(name, args, root)
        nodes_sa = gcp.serviceaccount.Account(
            f"{name}-nodes",
            account_id=b.node_account_id(args.config.common.name),
            display_name=b.sa_display_name(f"{args.config.common.name} GKE nodes"),
            project=args.config.project,
            opts=root,
        )
        nodes_email = identity.service_account_email(
            b.node_account_id(args.config.common.name), args.config.project
        )
        for role in b.NODE_ROLES:
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.split('/')[-1]}",
                project=args.config.project,
                role=role,
                member=f"serviceAccount:{nodes_email}",
                opts=pulumi.ResourceOptions(parent=self, depends_on=[nodes_sa]),
            )
        self.cluster = self._cluster(name, args, child)
        cluster_id = self.cluster.id
        self.system_pool = gcp.container.NodePool(
            f"{name}-system",
            cluster=cluster_id,
            location=args.config.region,
            **b.system_node_pool_args(
                args.config.system_machine_type, args.config.system_max_nodes, nodes_sa.email
            ),
            opts=child,
        )
        self.gpu_pool = gcp.container.NodePool(
            f"{name}-gpu",
            cluster=cluster_id,
            location=args.config.region,
            **b.gpu_node_pool_args(args.config.gpu_pool, nodes_sa.email),
            # after the CPU pool: GKE taints a GPU pool only when a non-GPU pool exists
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_pool]),
        )
        kubeconfig: pulumi.Output[str] = pulumi.Output.all(
            self.cluster.name,
            self.cluster.endpoint,
            # unknown until the cluster exists (preview), so tolerate a missing block
            self.cluster.master_auth.apply(
                lambda auth: auth.cluster_ca_certificate if auth else ""
            ),
        ).apply(lambda v: b.kubeconfig(v[0], v[1], v[2]))
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(kubeconfig)
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_pool]),
        )
        self.keda_identity = self._keda_identity(name, args, root)
        self.ref = ClusterRef(
            name=self.cluster.name, kubeconfig=self.kubeconfig, provider=self.provider
        )
        self.register_outputs({"clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})

    def _network(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions) -> None:
        self.network = gcp.compute.Network(
            f"{name}-vpc", auto_create_subnetworks=False, project=args.config.project, opts=opts
        )
        self.subnet = gcp.compute.Subnetwork(
            f"{name}-nodes",
            network=self.network.id,
            region=args.config.region,
            ip_cidr_range="10.10.0.0/20",
            private_ip_google_access=True,
            secondary_ip_ranges=[
                {"range_name": "pods", "ip_cidr_range": "10.20.0.0/14"},
                {"range_name": "services", "ip_cidr_range": "10.30.0.0/20"},
            ],
            project=args.config.project,
            opts=opts,
        )
        router = gcp.compute.Router(
            f"{name}-router",
            network=self.network.id,
            region=args.config.region,
            project=args.config.project,
            opts=opts,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            router=router.name,
            region=args.config.region,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            project=args.config.project,
            opts=opts,
        )

    def _cluster(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions
    ) -> gcp.container.Cluster:
        settings: dict[str, Any] = {
            "release_channel": {"channel": args.config.release_channel},
            "workload_identity_config": {
                "workload_pool": identity.workload_pool(args.config.project)
            },
            "private_cluster_config": {
                "enable_private_nodes": True,
                "enable_private_endpoint": False,
                "master_ipv4_cidr_block": args.config.master_cidr,
            },
            "master_authorized_networks_config": b.authorized_networks(
                args.config.authorized_networks
            ),
            "ip_allocation_policy": {
                "cluster_secondary_range_name": "pods",
                "services_secondary_range_name": "services",
            },
            "monitoring_config": {
                "managed_prometheus": {"enabled": True},
                "enable_components": ["SYSTEM_COMPONENTS", "POD", "DEPLOYMENT"],
            },
            "logging_config": {"enable_components": ["SYSTEM_COMPONENTS", "WORKLOADS"]},
        }
        return gcp.container.Cluster(
            f"{name}-gke",
            name=args.config.common.name,
            project=args.config.project,
            location=args.config.region,
            network=self.network.id,
            subnetwork=self.subnet.id,
            remove_default_node_pool=True,
            initial_node_count=1,
            deletion_protection=False,
            **settings,
            opts=opts,
        )

    def _keda_identity(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions
    ) -> PodIdentity:
        """KEDA's operator reads Managed Prometheus as its own Google service account."""
        keda_sa = gcp.serviceaccount.Account(
            f"{name}-keda",
            account_id=b.keda_account_id(args.config.common.name),
            display_name=b.sa_display_name(
                f"{args.config.common.name} KEDA (reads Managed Prometheus)"
            ),
            project=args.config.project,
            opts=opts,
        )
        keda_email = identity.service_account_email(
            b.keda_account_id(args.config.common.name), args.config.project
        )
        gcp.projects.IAMMember(
            f"{name}-keda-monitoring-viewer",
            project=args.config.project,
            role="roles/monitoring.viewer",
            member=f"serviceAccount:{keda_email}",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[keda_sa]),
        )
        binding = gcp.serviceaccount.IAMMember(
            f"{name}-keda-wi",
            service_account_id=keda_sa.name,
            role=identity.WORKLOAD_IDENTITY_USER,
            member=b.keda_identity_member(args.config.project),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
        )
        return PodIdentity(b.keda_pod_identity(keda_email), ready=(binding,))
