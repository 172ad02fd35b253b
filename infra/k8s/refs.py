"""Typed references one component hands another (instead of the component itself).

Plain frozen dataclasses: a consumer reads only what is named here, so what it depends on is
visible at its signature, and no component declares children of another one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    """The cloud identity KEDA's operator runs as, as the target binds it.

    ``keda_values`` are the KEDA chart's ``podIdentity`` values naming it (the target's pod
    identity: ``infra/targets/<target>/builders.py``); ``ready`` is what must exist before a
    pod may use it (the identity's binding, the role's policies).
    """

    keda_values: Mapping[str, Any]
    ready: Sequence[pulumi.Resource] = field(default_factory=tuple)
