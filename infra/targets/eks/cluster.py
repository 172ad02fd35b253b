"""``tdk:aws:GpuCluster``: EKS with an OIDC provider for IRSA and a managed GPU node group."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from infra.facts import kubernetes as kf
from infra.targets.eks import builders as b
from infra.targets.eks.network import EksNetwork

_MANAGED = "arn:aws:iam::aws:policy/"
CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)


@dataclass
class GpuClusterArgs:
    """Region, zones, Kubernetes version, the GPU group and the CPU system group."""

    name: str
    region: str
    zones: Sequence[str]
    kubernetes_version: str
    support_type: str
    gpu_instance_type: str
    gpu_min_nodes: int
    gpu_max_nodes: int
    spot: bool
    system_instance_type: str
    system_max_nodes: int
    public_access_cidrs: Sequence[str]
    log_retention_days: int


class GpuCluster(pulumi.ComponentResource):
    """VPC, EKS control plane, OIDC provider, system and GPU node groups, NVIDIA device
    plugin and Cluster Autoscaler (pinned Helm charts), and a Kubernetes provider."""

    def __init__(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:aws:GpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.args = args
        self.network = EksNetwork(f"{name}-net", args.name, args.region, args.zones, opts=child)
        cluster_role = _role(f"{name}-cluster", b.service_trust_policy("eks.amazonaws.com"), child)
        _attach(f"{name}-cluster", cluster_role, CLUSTER_POLICIES, child)
        # EKS writes control-plane logs here; declared first so it has a retention
        control_plane_logs = aws.cloudwatch.LogGroup(
            f"{name}-control-plane-logs",
            name=b.control_plane_log_group(args.name),
            retention_in_days=args.log_retention_days,
            opts=child,
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=args.name,
            version=args.kubernetes_version,
            upgrade_policy={"support_type": args.support_type},
            role_arn=cluster_role.arn,
            vpc_config={
                "subnet_ids": [*self.network.private_subnet_ids, *self.network.public_subnet_ids],
                "endpoint_private_access": True,
                "endpoint_public_access": True,
                "public_access_cidrs": list(args.public_access_cidrs),
            },
            access_config={
                "authentication_mode": "API",
                "bootstrap_cluster_creator_admin_permissions": True,
            },
            enabled_cluster_log_types=["api", "audit", "authenticator"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[control_plane_logs]),
        )
        #: the security group EKS creates for the control plane and managed nodes
        self.security_group_id: pulumi.Output[str] = self.cluster.vpc_config.apply(
            lambda vpc: vpc.cluster_security_group_id or ""
        )
        self.issuer_url: pulumi.Output[str] = self.cluster.identities.apply(
            lambda ids: (ids[0].oidcs[0].issuer or "") if ids and ids[0].oidcs else ""
        )
        self.oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc", url=self.issuer_url, client_id_lists=["sts.amazonaws.com"], opts=child
        )
        self._node_groups(name, args, child)
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(
                self.cluster.name,
                self.cluster.endpoint,
                self.cluster.certificate_authority.apply(lambda ca: ca.data if ca else ""),
            ).apply(lambda v: b.kubeconfig(v[0], v[1], v[2], args.region))
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_group]),
        )
        self._addons(name, args)
        self.register_outputs({"clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})

    def irsa_role(
        self, name: str, namespace: str, service_account: str, role_name: str | None = None
    ) -> aws.iam.Role:
        """A role only ``namespace/service_account`` can assume through the OIDC provider."""
        trust = pulumi.Output.all(self.oidc.arn, self.issuer_url).apply(
            lambda v: b.irsa_trust_policy(v[0], v[1], namespace, service_account)
        )
        return aws.iam.Role(
            name,
            name=role_name,
            assume_role_policy=trust,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _node_groups(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions) -> None:
        node_role = _role(f"{name}-nodes", b.service_trust_policy("ec2.amazonaws.com"), opts)
        attachments = _attach(f"{name}-nodes", node_role, NODE_POLICIES, opts)
        # The Cluster Autoscaler owns the desired sizes once the groups exist: never reset them.
        after = pulumi.ResourceOptions(
            parent=self, depends_on=attachments, ignore_changes=["scalingConfig.desiredSize"]
        )
        common: dict[str, Any] = {
            "cluster_name": self.cluster.name,
            "node_role_arn": node_role.arn,
            "subnet_ids": self.network.private_subnet_ids,
        }
        self.system_group = aws.eks.NodeGroup(
            f"{name}-system",
            **common,
            **b.system_node_group_args(args.system_instance_type, args.system_max_nodes),
            opts=after,
        )
        self.gpu_group = aws.eks.NodeGroup(
            f"{name}-gpu",
            **common,
            **b.gpu_node_group_args(
                args.gpu_instance_type, args.gpu_min_nodes, args.gpu_max_nodes, args.spot
            ),
            opts=after,
        )

    def _addons(self, name: str, args: GpuClusterArgs) -> None:
        on_cluster = pulumi.ResourceOptions(parent=self, provider=self.provider)
        self.device_plugin = k8s.helm.v3.Release(
            f"{name}-nvidia-device-plugin",
            name=b.DEVICE_PLUGIN_CHART,  # fixed: an auto-name could pass Helm's 53 characters
            chart=b.DEVICE_PLUGIN_CHART,
            version=kf.device_plugin_for(args.kubernetes_version).version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=b.DEVICE_PLUGIN_REPO),
            namespace="kube-system",
            values=b.device_plugin_values(),
            opts=on_cluster,
        )
        autoscaler_role = self.irsa_role(f"{name}-autoscaler", "kube-system", b.AUTOSCALER_SA)
        aws.iam.RolePolicy(
            f"{name}-autoscaler",
            role=autoscaler_role.id,
            policy=b.autoscaler_policy(args.name),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.autoscaler = k8s.helm.v3.Release(
            f"{name}-cluster-autoscaler",
            name=b.AUTOSCALER_CHART,
            chart=b.AUTOSCALER_CHART,
            version=kf.autoscaler_for(args.kubernetes_version).version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=b.AUTOSCALER_REPO),
            namespace="kube-system",
            values=b.autoscaler_values(
                args.name, args.region, autoscaler_role.arn, args.kubernetes_version
            ),
            opts=on_cluster,
        )


def _role(name: str, trust: str, opts: pulumi.ResourceOptions) -> aws.iam.Role:
    return aws.iam.Role(name, assume_role_policy=trust, opts=opts)


def _attach(
    name: str, role: aws.iam.Role, policies: Sequence[str], opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    return [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}", role=role.name, policy_arn=f"{_MANAGED}{policy}", opts=opts
        )
        for policy in policies
    ]
