"""Declares an onprem stack: the cluster's provider from the stack's kubeconfig and context,
KEDA (and Envoy Gateway in ``mme`` mode), the Triton workload with its PodMonitor and alert
rules, and its Grafana dashboard."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from infra.k8s.addons_component import ClusterAddons, ClusterAddonsArgs
from infra.k8s.common import invoke_command, port_forward_command
from infra.k8s.component import TritonService, TritonServiceArgs
from infra.k8s.refs import ClusterRef, PodIdentity

if TYPE_CHECKING:
    from infra.targets.base import Manifest
    from infra.targets.onprem.config import OnpremConfig

#: ``clusterIdentifier`` when the stack names no context: the kubeconfig's current one
CURRENT_CONTEXT = "current-context"


class ExistingCluster(pulumi.ComponentResource):
    """The cluster the stack deploys to, as its kubeconfig (a path; None: $KUBECONFIG or
    ~/.kube/config) and context reach it: a provider, no cluster resource.

    ``cluster_identifier`` keeps a rotated token or a moved kubeconfig from replacing every
    object (pulumi-kubernetes 4.34.2's Provider: ``kubeconfig`` is "the contents of a
    kubeconfig file or the path to a kubeconfig file"; ``clusterIdentifier`` alone decides its
    replacement; the installed package's provider.py, read 2026-12-07)."""

    def __init__(self, name: str, config: OnpremConfig) -> None:
        super().__init__("tdk:onprem:ExistingCluster", name, None, None)
        context = config.context or CURRENT_CONTEXT
        self.provider = k8s.Provider(
            f"{name}-cluster",
            kubeconfig=config.kubeconfig,
            context=config.context,
            cluster_identifier=context,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.ref = ClusterRef(
            name=context,
            kubeconfig=pulumi.Output.secret(config.kubeconfig or ""),
            provider=self.provider,
        )
        self.register_outputs({"context": context})


class GrafanaDashboard(pulumi.ComponentResource):
    """The dashboard's ConfigMap, in the workload's namespace once it exists."""

    def __init__(
        self, name: str, manifest: Manifest, provider: k8s.Provider, after: pulumi.Resource
    ) -> None:
        super().__init__("tdk:onprem:GrafanaDashboard", name, None, None)
        self.config_map = k8s.core.v1.ConfigMap(
            name,
            metadata=manifest["metadata"],
            data=manifest["data"],
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[after]),
        )
        self.register_outputs({"name": manifest["metadata"]["name"]})


def declare_onprem(config: OnpremConfig) -> dict[str, Any]:
    """Every resource of the stack, children of its components; the stack outputs."""
    from infra.targets.onprem.config import own_manifests, triton_spec

    name, workload = config.common.name, config.workload
    cluster = ExistingCluster(name, config)
    addons = ClusterAddons(
        name,
        ClusterAddonsArgs(
            cluster=cluster.ref,
            keda_identity=PodIdentity(keda_values={}),  # the cluster's Prometheus asks none
            keda_version=config.keda_version,
            gateway=workload.mme is not None,
        ),
    )
    spec = triton_spec(config)
    own = own_manifests(config)
    custom = {f"{name}-{m['kind'].lower()}": m for m in own if m["kind"] != "ConfigMap"}
    service = TritonService(
        f"{name}-triton",
        TritonServiceArgs(
            spec=spec, provider=cluster.provider, depends_on=addons.ready, own=custom
        ),
    )
    for manifest in (m for m in own if m["kind"] == "ConfigMap"):
        GrafanaDashboard(manifest["metadata"]["name"], manifest, cluster.provider, service)
    return {
        "context": config.context or CURRENT_CONTEXT,
        "namespace": spec.namespace,
        "serviceName": spec.name,
        "prometheusUrl": config.prometheus_url,
        "portForward": port_forward_command(spec),
        "invokeCommand": invoke_command(config.common.target, spec, config.release.url),
    }
