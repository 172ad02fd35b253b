"""Typed references one component hands another (instead of the component itself).

Plain frozen dataclasses: a consumer reads only what is named here, so what it depends on is
visible at its signature, and no component declares children of another one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pulumi
    import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class ClusterRef:
    """A Kubernetes cluster as its dependents use it."""

    #: the cluster's name in the cloud
    name: pulumi.Input[str]
    #: a kubeconfig for the cluster (a secret output)
    kubeconfig: pulumi.Output[str]
    #: the Kubernetes provider every in-cluster resource is declared with
    provider: k8s.Provider


@dataclass(frozen=True)
class PodIdentity:
    """The cloud identity an in-cluster ServiceAccount runs as.

    ``principal`` is the Google service account email (Workload Identity, ``provider="gcp"``)
    or the IAM role ARN (IRSA, ``provider="aws"``); ``ready`` is what must exist before a pod
    may use it (the Workload Identity binding, the role's policies).
    """

    provider: Literal["gcp", "aws"]
    principal: pulumi.Input[str]
    ready: Sequence[pulumi.Resource] = field(default_factory=tuple)
