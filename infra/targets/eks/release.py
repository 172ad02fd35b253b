"""``tdk:aws:ReleaseReader``: the IRSA role Triton's pods read the release prefix as, and
``tdk:aws:EngineBuilder``: the one ``tdk build``'s Job writes the release's engine cache as.

IRSA (docs.aws.amazon.com/eks/latest/userguide/associate-service-account-role.html, read
2026-12-07): a role whose trust policy names the cluster's OIDC provider and, as ``sub``,
``system:serviceaccount:NAMESPACE:SERVICE_ACCOUNT``, assumed by the pods of the
ServiceAccount annotated ``eks.amazonaws.com/role-arn``; one role per ServiceAccount here, so
Triton's pods cannot assume the builder's.

Before 2026-12-07 (issue 50 item 3) EngineBuilder was ``tdk:aws:PlanBuilder`` named
``<name>-plans``, its role and policy ``<name>-plan-builder`` and ``<name>-plan-build``. Pulumi
names a resource by its URN (type, name and parent path), so each carries an alias to its
former type and name: a stack deployed before keeps its live role and policy instead of
deleting and recreating them (pulumi.com/docs/iac/concepts/resources/options/aliases, read
2026-12-07: the engine combines a parent's aliases with each child's own)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.config import ReleaseLocation
from infra.k8s.spec import build_account_name
from infra.targets.eks import builders as b
from infra.targets.eks.cluster import EksClusterRef, irsa_role, moved_from


@dataclass(frozen=True)
class ReleaseReaderArgs:
    """Who reads (the Kubernetes ServiceAccount) and what (the release prefix)."""

    name: str
    release: ReleaseLocation
    namespace: str
    service_account: str


class ReleaseReader(pulumi.ComponentResource):
    """An IAM role only ``namespace/service_account`` can assume, that may read only the
    release prefix and write nothing (``role``; ``policy`` is what pods must wait for)."""

    def __init__(
        self,
        name: str,
        args: ReleaseReaderArgs,
        cluster: EksClusterRef,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:aws:ReleaseReader", name, None, opts)
        # GpuCluster declared both before this component existed: the alias keeps them
        child = pulumi.ResourceOptions.merge(
            pulumi.ResourceOptions(parent=self), moved_from(cluster)
        )
        self.role = irsa_role(
            f"{args.name}-release-reader",
            cluster,
            args.namespace,
            args.service_account,
            child,
            role_name=b.triton_role_name(args.name),
        )
        self.policy = aws.iam.RolePolicy(
            f"{args.name}-release-read",
            role=self.role.id,
            policy=b.release_read_policy(args.release.bucket, args.release.prefix),
            opts=child,
        )
        self.register_outputs({"roleArn": self.role.arn})


#: EngineBuilder's type token before 2026-12-07, kept as an alias
FORMER_BUILDER_TYPE = "tdk:aws:PlanBuilder"


def former_builder_name(name: str) -> str:
    """EngineBuilder's logical name before 2026-12-07 for the workload ``name``."""
    return f"{name}-plans"


@dataclass(frozen=True)
class EngineBuilderArgs:
    """Whose build Job (the workload's name and namespace) writes which release's engines."""

    name: str
    release: ReleaseLocation
    namespace: str


class EngineBuilder(pulumi.ComponentResource):
    """An IAM role only the workload's build ServiceAccount can assume, that may list, read and
    write only the release's ``engines/`` (``role``; ``policy`` is what the Job waits for). The
    stack names it ``<name>-engines``."""

    def __init__(
        self,
        name: str,
        args: EngineBuilderArgs,
        cluster: EksClusterRef,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        was = pulumi.Alias(type_=FORMER_BUILDER_TYPE, name=former_builder_name(args.name))
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[was]))
        super().__init__("tdk:aws:EngineBuilder", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role = irsa_role(
            f"{args.name}-engine-builder",
            cluster,
            args.namespace,
            build_account_name(args.name),
            child.merge(_was(f"{args.name}-plan-builder")),
            role_name=b.build_role_name(args.name),
        )
        self.policy = aws.iam.RolePolicy(
            f"{args.name}-engine-build",
            role=self.role.id,
            policy=b.engine_build_policy(args.release.bucket, args.release.prefix),
            opts=child.merge(_was(f"{args.name}-plan-build")),
        )
        self.register_outputs({"roleArn": self.role.arn})


def _was(name: str) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(aliases=[pulumi.Alias(name=name)])
