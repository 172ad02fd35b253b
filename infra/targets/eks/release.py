"""``tdk:aws:ReleaseReader``: the IRSA role Triton's pods read the release prefix as."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.config import ReleaseLocation
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
    release prefix (``role``; ``policy`` is what pods must wait for)."""

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
