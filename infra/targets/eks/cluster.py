"""``tdk:aws:GpuCluster``: EKS with an OIDC provider for IRSA and a managed GPU node group."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from infra.clouds.aws.identity import irsa_trust_policy, service_trust_policy
from infra.facts import kubernetes as kf
from infra.k8s.addons_component import ChartArgs
from infra.k8s.refs import ClusterRef
from infra.targets.eks import builders as b
from infra.targets.eks.config import EksConfig
from infra.targets.eks.network import EksNetwork

_MANAGED = "arn:aws:iam::aws:policy/"
CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)


@dataclass(frozen=True)
class EksClusterRef(ClusterRef):
    """An EKS cluster as its dependents use it: what IRSA, the AMP scraper and the Container
    Insights add-on read, besides the Kubernetes provider."""

    arn: pulumi.Output[str]
    #: the IAM OIDC provider of the cluster and its issuer (IRSA trust policies)
    oidc_provider_arn: pulumi.Output[str]
    issuer_url: pulumi.Output[str]
    private_subnet_ids: Sequence[pulumi.Output[str]]
    #: the security group EKS creates for the control plane and managed nodes
    security_group_id: pulumi.Output[str]
    #: the managed node groups (what in-cluster add-ons wait for)
    node_groups: Sequence[pulumi.Resource]
    #: the GpuCluster component's URN: resources that moved out of it alias their old parent
    urn: pulumi.Output[str]


def irsa_role(
    name: str,
    cluster: EksClusterRef,
    namespace: str,
    service_account: str,
    opts: pulumi.ResourceOptions,
    role_name: str | None = None,
) -> aws.iam.Role:
    """A role only ``namespace/service_account`` can assume through the cluster's OIDC
    provider, declared with ``opts`` (the caller's component is its parent)."""
    trust = pulumi.Output.all(cluster.oidc_provider_arn, cluster.issuer_url).apply(
        lambda v: irsa_trust_policy(v[0], v[1], namespace, service_account)
    )
    return aws.iam.Role(name, name=role_name, assume_role_policy=trust, opts=opts)


def moved_from(cluster: EksClusterRef) -> pulumi.ResourceOptions:
    """Options of a resource GpuCluster used to declare: the alias keeps its deployed state."""
    return pulumi.ResourceOptions(aliases=[pulumi.Alias(parent=cluster.urn)])


@dataclass
class GpuClusterArgs:
    """The stack's validated config: region, zones, Kubernetes version, the GPU group and
    the CPU system group."""

    config: EksConfig


class GpuCluster(pulumi.ComponentResource):
    """VPC, EKS control plane, OIDC provider, system and GPU node groups, the Cluster
    Autoscaler's IRSA role, and a Kubernetes provider. ``ref`` is what dependents read;
    ``device_plugin`` and ``autoscaler`` are the charts ``ClusterAddons`` installs."""

    def __init__(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:aws:GpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.args = args
        self.network = EksNetwork(
            f"{name}-net",
            args.config.common.name,
            args.config.region,
            args.config.zones,
            opts=child,
        )
        cluster_role = _role(f"{name}-cluster", service_trust_policy("eks.amazonaws.com"), child)
        _attach(f"{name}-cluster", cluster_role, CLUSTER_POLICIES, child)
        # EKS writes control-plane logs here; declared first so it has a retention
        control_plane_logs = aws.cloudwatch.LogGroup(
            f"{name}-control-plane-logs",
            name=b.control_plane_log_group(args.config.common.name),
            retention_in_days=args.config.log_retention_days,
            opts=child,
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=args.config.common.name,
            version=args.config.kubernetes_version,
            upgrade_policy={"support_type": args.config.support_type},
            role_arn=cluster_role.arn,
            vpc_config={
                "subnet_ids": [*self.network.private_subnet_ids, *self.network.public_subnet_ids],
                "endpoint_private_access": True,
                "endpoint_public_access": True,
                "public_access_cidrs": list(args.config.public_access_cidrs),
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
            ).apply(lambda v: b.kubeconfig(v[0], v[1], v[2], args.config.region))
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_group]),
        )
        self.ref = EksClusterRef(
            name=self.cluster.name,
            kubeconfig=self.kubeconfig,
            provider=self.provider,
            arn=self.cluster.arn,
            oidc_provider_arn=self.oidc.arn,
            issuer_url=self.issuer_url,
            private_subnet_ids=list(self.network.private_subnet_ids),
            security_group_id=self.security_group_id,
            node_groups=(self.system_group, self.gpu_group),
            urn=self.urn,
        )
        self._autoscaler(name, args)
        self.register_outputs({"clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})

    def _node_groups(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions) -> None:
        node_role = _role(f"{name}-nodes", service_trust_policy("ec2.amazonaws.com"), opts)
        self.node_role = node_role
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
            **b.system_node_group_args(
                args.config.system_instance_type, args.config.system_max_nodes
            ),
            opts=after,
        )
        self.gpu_group = aws.eks.NodeGroup(
            f"{name}-gpu",
            **common,
            **b.gpu_node_group_args(
                args.config.gpu_instance_type,
                args.config.gpu_min_nodes,
                args.config.gpu_max_nodes,
                args.config.spot,
            ),
            opts=after,
        )

    def _autoscaler(self, name: str, args: GpuClusterArgs) -> None:
        """The Cluster Autoscaler's IRSA role and policy; the charts ClusterAddons installs."""
        role = irsa_role(
            f"{name}-autoscaler",
            self.ref,
            "kube-system",
            b.AUTOSCALER_SA,
            pulumi.ResourceOptions(parent=self),
        )
        aws.iam.RolePolicy(
            f"{name}-autoscaler",
            role=role.id,
            policy=b.autoscaler_policy(args.config.common.name),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.device_plugin = ChartArgs(
            kf.device_plugin_for(args.config.kubernetes_version).version, b.device_plugin_values()
        )
        self.autoscaler = ChartArgs(
            kf.autoscaler_for(args.config.kubernetes_version).version,
            b.autoscaler_values(
                args.config.common.name,
                args.config.region,
                role.arn,
                args.config.kubernetes_version,
            ),
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
