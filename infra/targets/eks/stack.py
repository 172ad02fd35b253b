"""Declares an eks stack: cluster, monitoring, add-ons, release reader and engine builder roles,
Triton workload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi

from infra.k8s.addons_component import ClusterAddons, ClusterAddonsArgs
from infra.k8s.common import invoke_command, port_forward_command
from infra.k8s.component import TritonService, TritonServiceArgs
from infra.k8s.config import with_front_image
from infra.targets.eks import builders as b
from infra.targets.eks.cluster import GpuCluster, GpuClusterArgs
from infra.targets.eks.front_registry import FrontRegistry
from infra.targets.eks.monitoring import EksMonitoring, EksMonitoringArgs
from infra.targets.eks.release import (
    EngineBuilder,
    EngineBuilderArgs,
    ReleaseReader,
    ReleaseReaderArgs,
)

if TYPE_CHECKING:
    from infra.targets.eks.config import EksConfig


def declare_eks(config: EksConfig) -> dict[str, Any]:
    """Every resource of the stack, children of its components; the stack outputs."""
    from infra.targets.eks.config import triton_spec

    name = config.common.name
    cluster = GpuCluster(
        name,
        GpuClusterArgs(config),
    )
    workload = config.workload
    monitoring = EksMonitoring(
        f"{name}-monitoring",
        EksMonitoringArgs(
            name=name,
            region=config.region,
            namespace=workload.namespace,
            job=name,
            min_replicas=workload.scaling.min_replicas,
            alerts=workload.alerts,
            budget=config.budget,
            log_retention_days=config.log_retention_days,
        ),
        cluster=cluster.ref,
    )
    addons = ClusterAddons(
        name,
        ClusterAddonsArgs(
            cluster=cluster.ref,
            keda_identity=monitoring.keda_identity,
            keda_version=config.keda_version,
            gateway=config.workload.mme is not None,
            device_plugin=cluster.device_plugin,
            autoscaler=cluster.autoscaler,
            moved_from=cluster,
        ),
    )
    reader = ReleaseReader(
        f"{name}-release",
        ReleaseReaderArgs(
            name=name,
            release=config.release,
            namespace=workload.namespace,
            service_account=name,
        ),
        cluster=cluster.ref,
    )
    builder = EngineBuilder(
        f"{name}-engines",
        EngineBuilderArgs(name=name, release=config.release, namespace=workload.namespace),
        cluster=cluster.ref,
    )
    prometheus_url = monitoring.workspace.id.apply(lambda ws: b.amp_query_url(config.region, ws))
    spec = triton_spec(config, reader.role.arn, builder.role.arn, prometheus_url)
    outputs: dict[str, Any] = {}
    mme = workload.mme
    if mme is not None and mme.front_image is None:
        registry = FrontRegistry(
            f"{name}-front", stack_name=name, node_role_arn=cluster.node_role.arn
        )
        spec = with_front_image(spec, registry.ref)
        outputs["frontImage"] = registry.ref
    TritonService(
        f"{name}-triton",
        TritonServiceArgs(spec=spec, provider=cluster.ref.provider, depends_on=addons.ready),
        opts=pulumi.ResourceOptions(depends_on=[reader.policy, builder.policy]),
    )
    return outputs | {
        "clusterName": cluster.cluster.name,
        "region": config.region,
        "kubeconfig": cluster.kubeconfig,
        "namespace": spec.namespace,
        "serviceName": spec.name,
        "tritonRoleArn": reader.role.arn,
        "buildRoleArn": builder.role.arn,
        "ampWorkspaceId": monitoring.workspace.id,
        "dashboardUrl": monitoring.dashboard_url,
        "portForward": port_forward_command(spec),
        "invokeCommand": invoke_command(config.common.target, spec, config.release.url),
    }
