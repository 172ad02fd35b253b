"""The onprem target's registry entry: Triton on a Kubernetes cluster that already exists (on
premises, or any cloud's), reached through a kubeconfig, with no cloud account."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from infra.k8s.entry import KubernetesEntry
from infra.targets.capabilities import Refused
from infra.targets.entry import Lazy
from infra.targets.ports import ValidatePort

if TYPE_CHECKING:
    from infra.targets.base import Target
    from infra.targets.operations import Locator

GPU_KEY = "onpremGpu"
IMAGE_KEY = "k8sTritonImage"


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and pulumi-kubernetes)."""
    from infra.targets.onprem.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.onprem.client import LOCATOR

    return LOCATOR


class OnpremEntry(KubernetesEntry):
    name = "onprem"
    order = 55
    summary = "an existing Kubernetes cluster (a kubeconfig) running Triton, autoscaled by KEDA"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    # no cloud: the kubeconfig is the only credential a deploy uses (kubectl and Pulumi read it)
    cloud = None
    plan = Refused(
        "an existing cluster's nodes have no price in the kit's tables (they are already "
        "bought or billed to another account): size the stack with tdk bench on the cluster"
    )
    validate = ValidatePort(
        {"gpu": GPU_KEY, "image": IMAGE_KEY},
        {
            "releaseUrl": "s3://tdkvalidate/releases/release",
            "onpremKubernetesVersion": "1.33",
            "onpremPrometheusUrl": "http://prometheus-operated.monitoring.svc:9090",
        },
    )


ENTRY = OnpremEntry()
