"""``tdk:k8s:ClusterAddons``: the cluster add-ons the Triton workload relies on, one shared
component for both Kubernetes targets (pinned Helm charts).

KEDA is always installed; the NVIDIA device plugin and the Cluster Autoscaler only where the
cloud does not provide them (EKS gives their chart version and values; GKE gives None); Envoy
Gateway where a workload runs in ``mme`` mode (``k8s.gateway``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.k8s.addons import (
    AUTOSCALER_CHART,
    AUTOSCALER_REPO,
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_REPO,
    KEDA_CHART,
    KEDA_CHART_VERSION,
    KEDA_NAMESPACE,
    KEDA_REPO,
    SYSTEM_NAMESPACE,
    keda_values,
)
from infra.k8s.gateway import (
    GATEWAY_CHART,
    GATEWAY_CHART_VERSION,
    GATEWAY_NAMESPACE,
    GATEWAY_REPO,
    gateway_values,
)
from infra.k8s.refs import ClusterRef, PodIdentity


@dataclass(frozen=True)
class ChartArgs:
    """A pinned chart release: its version and its Helm values (values may hold outputs)."""

    version: str
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterAddonsArgs:
    """The cluster, KEDA's identity and chart, and the charts the cloud does not provide."""

    cluster: ClusterRef
    #: the identity KEDA's operator queries the managed Prometheus as
    keda_identity: PodIdentity
    keda_version: str = KEDA_CHART_VERSION
    #: None: the cloud installs the NVIDIA device plugin (GKE)
    device_plugin: ChartArgs | None = None
    #: None: the cloud scales the node pools (GKE)
    autoscaler: ChartArgs | None = None
    #: Envoy Gateway, the router of ``mme`` workloads (``k8sModelMode``)
    gateway: bool = False
    #: the component that declared these releases before this one existed: an alias keeps
    #: their state (no replacement) on stacks deployed before the move
    moved_from: pulumi.Input[str] | pulumi.Resource | None = None


class ClusterAddons(pulumi.ComponentResource):
    """KEDA, and where given the NVIDIA device plugin and the Cluster Autoscaler.

    ``ready`` is what a workload waits for: KEDA (its ScaledObject's CRDs) and the device
    plugin (its GPUs are schedulable only once the plugin advertises them).
    """

    def __init__(
        self, name: str, args: ClusterAddonsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:k8s:ClusterAddons", name, None, opts)
        aliases = [pulumi.Alias(parent=args.moved_from)] if args.moved_from is not None else []
        on_cluster = pulumi.ResourceOptions(
            parent=self, provider=args.cluster.provider, aliases=aliases
        )
        self.device_plugin: k8s.helm.v3.Release | None = None
        self.autoscaler: k8s.helm.v3.Release | None = None
        if args.device_plugin is not None:
            self.device_plugin = _release(
                f"{name}-nvidia-device-plugin",
                DEVICE_PLUGIN_CHART,
                DEVICE_PLUGIN_REPO,
                SYSTEM_NAMESPACE,
                args.device_plugin,
                on_cluster,
            )
        if args.autoscaler is not None:
            self.autoscaler = _release(
                f"{name}-cluster-autoscaler",
                AUTOSCALER_CHART,
                AUTOSCALER_REPO,
                SYSTEM_NAMESPACE,
                args.autoscaler,
                on_cluster,
            )
        self.keda = keda_release(
            f"{name}-keda",
            args.keda_identity,
            pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(depends_on=list(args.keda_identity.ready))
            ),
            version=args.keda_version,
        )
        self.gateway: k8s.helm.v3.Release | None = None
        if args.gateway:
            self.gateway = k8s.helm.v3.Release(
                f"{name}-envoy-gateway",
                name="eg",  # fixed (one per cluster)
                chart=f"{GATEWAY_REPO}/{GATEWAY_CHART}",
                version=GATEWAY_CHART_VERSION,
                namespace=GATEWAY_NAMESPACE,
                create_namespace=True,
                values=gateway_values(),
                opts=on_cluster,
            )
        self.ready: list[pulumi.Resource] = [
            self.keda,
            *([self.device_plugin] if self.device_plugin is not None else []),
            *([self.gateway] if self.gateway is not None else []),
        ]
        self.register_outputs(
            {
                "kedaVersion": args.keda_version,
                "devicePlugin": args.device_plugin.version if args.device_plugin else None,
                "autoscaler": args.autoscaler.version if args.autoscaler else None,
                "envoyGateway": GATEWAY_CHART_VERSION if args.gateway else None,
            }
        )


def _release(
    name: str,
    chart: str,
    repo: str,
    namespace: str,
    args: ChartArgs,
    opts: pulumi.ResourceOptions,
) -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release(
        name,
        name=chart,  # fixed (one per cluster): an auto-name could pass Helm's 53 characters
        chart=chart,
        version=args.version,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo),
        namespace=namespace,
        values=dict(args.values),
        opts=opts,
    )


def keda_release(
    name: str,
    identity: PodIdentity,
    opts: pulumi.ResourceOptions,
    version: str = KEDA_CHART_VERSION,
) -> k8s.helm.v3.Release:
    """The pinned KEDA Helm release, its operator bound to ``identity``."""
    return k8s.helm.v3.Release(
        name,
        name=KEDA_CHART,  # fixed (one per cluster), not auto-named past Helm's 53 characters
        chart=KEDA_CHART,
        version=version,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=KEDA_REPO),
        namespace=KEDA_NAMESPACE,
        create_namespace=True,
        values=keda_values(identity.keda_values),
        opts=opts,
    )
