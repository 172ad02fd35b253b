"""Declares a gke stack: cluster, release reader, engine builder, Triton workload, monitoring;
returns outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi

from infra.clouds.gcp.guardrails import BUDGET_SERVICE
from infra.k8s.addons_component import ClusterAddons, ClusterAddonsArgs
from infra.k8s.common import invoke_command, port_forward_command
from infra.k8s.component import TritonService, TritonServiceArgs
from infra.k8s.config import with_front_image
from infra.targets.gke import builders as b
from infra.targets.gke.cluster import GpuCluster, GpuClusterArgs
from infra.targets.gke.engine_builder import EngineBuilder, EngineBuilderArgs
from infra.targets.gke.front_registry import ARTIFACT_REGISTRY_SERVICE, FrontRegistry
from infra.targets.gke.monitoring import (
    Monitoring,
    MonitoringArgs,
    ReleaseReader,
    ReleaseReaderArgs,
)
from infra.targets.gke.services import ProjectServices

if TYPE_CHECKING:
    from infra.targets.gke.config import GkeConfig


def declare_gke(config: GkeConfig) -> dict[str, Any]:
    """Every resource of the stack, children of its components; the stack outputs."""
    from infra.targets.gke.config import triton_spec

    name = config.common.name
    spec = triton_spec(config)
    budget = config.budget if config.billing_account else None
    mme = config.workload.mme
    build = mme is not None and mme.front_image is None
    apis = [*b.REQUIRED_SERVICES, *([BUDGET_SERVICE] if budget else [])]
    apis += [ARTIFACT_REGISTRY_SERVICE] if build else []
    services = ProjectServices(f"{name}-apis", config.project, apis)
    outputs: dict[str, Any] = {}
    if build:
        registry = FrontRegistry(
            f"{name}-front", stack_name=name, project=config.project, region=config.region,
            services=services.resources,
        )  # fmt: skip
        spec = with_front_image(spec, registry.ref)
        outputs["frontImage"] = registry.ref
    cluster = GpuCluster(
        name,
        GpuClusterArgs(config, services=services.resources),
    )
    # GKE installs the NVIDIA device plugin and scales its node pools itself: KEDA only
    addons = ClusterAddons(
        name,
        ClusterAddonsArgs(
            cluster=cluster.ref,
            keda_identity=cluster.keda_identity,
            keda_version=config.keda_version,
            gateway=config.workload.mme is not None,
            moved_from=cluster,
        ),
    )
    reader = ReleaseReader(
        f"{name}-release",
        ReleaseReaderArgs(
            name=name,
            project=config.project,
            release=config.release,
            namespace=spec.namespace,
            service_account=spec.name,
            services=services.resources,
        ),
        cluster=cluster.cluster,
    )
    builder = EngineBuilder(
        f"{name}-engines",
        EngineBuilderArgs(
            name=name,
            project=config.project,
            release=config.release,
            namespace=spec.namespace,
            services=services.resources,
        ),
        cluster=cluster.cluster,
    )
    TritonService(
        f"{name}-triton",
        TritonServiceArgs(spec=spec, provider=cluster.ref.provider, depends_on=addons.ready),
        opts=pulumi.ResourceOptions(depends_on=[reader, builder]),
    )
    monitoring = Monitoring(
        f"{name}-monitoring",
        MonitoringArgs(
            name=name,
            project=config.project,
            namespace=spec.namespace,
            job=spec.name,
            alerts=config.workload.alerts,
            services=services.resources,
            budget=budget,
            billing_account=config.billing_account,
        ),
    )
    return outputs | {
        "clusterName": cluster.cluster.name,
        "region": config.region,
        "kubeconfig": cluster.kubeconfig,
        "namespace": spec.namespace,
        "serviceName": spec.name,
        "tritonServiceAccount": reader.email,
        "buildServiceAccount": builder.email,
        "dashboardUrl": monitoring.dashboard_url,
        "portForward": port_forward_command(spec),
        "invokeCommand": invoke_command(config.common.target, spec, config.release.url),
    }
