"""Declares an aks stack: cluster, monitoring, workload identities (Triton's, the engine
builder's, KEDA's), add-ons, Triton workload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_azure_native as azure

from infra.clouds.azure import identity
from infra.clouds.azure.workload_identity import Grant, WorkloadIdentity, WorkloadIdentityArgs
from infra.k8s.addons import KEDA_NAMESPACE, KEDA_OPERATOR_SA
from infra.k8s.addons_component import ClusterAddons, ClusterAddonsArgs
from infra.k8s.common import invoke_command, port_forward_command
from infra.k8s.component import TritonService, TritonServiceArgs
from infra.k8s.config import with_front_image
from infra.k8s.refs import PodIdentity
from infra.k8s.spec import build_account_name
from infra.targets.aks import arm
from infra.targets.aks import builders as b
from infra.targets.aks.cluster import AksCluster
from infra.targets.aks.front_registry import FrontRegistry
from infra.targets.aks.monitoring import AksMonitoring, AksMonitoringArgs

if TYPE_CHECKING:
    from infra.targets.aks.config import AksConfig


def _role(subscription: pulumi.Output[str], role: str) -> Any:
    return subscription.apply(lambda s: identity.role_definition(s, role))


def _container(subscription: pulumi.Output[str], config: AksConfig) -> Any:
    return subscription.apply(
        lambda s: arm.container_scope(s, config.release_resource_group, config.blob)
    )


def release_grants(subscription: pulumi.Output[str], config: AksConfig) -> tuple[Grant, ...]:
    """Triton's identity reads the release prefix (its engine cache included) and writes
    nothing."""
    reader = _role(subscription, identity.STORAGE_BLOB_DATA_READER)
    scope = _container(subscription, config)
    return (Grant(reader, scope, arm.release_read_condition(config.blob)),)


def engine_grants(subscription: pulumi.Output[str], config: AksConfig) -> tuple[Grant, ...]:
    """``tdk build``'s identity, the engine cache's only writer, reads and writes only there."""
    writer = _role(subscription, identity.STORAGE_BLOB_DATA_CONTRIBUTOR)
    scope = _container(subscription, config)
    return (Grant(writer, scope, arm.engine_write_condition(config.blob)),)


def _kubelet_object_id(profile: Any) -> str:
    """The object id of the identity the cluster's kubelets run as (AKS creates it)."""
    return str(profile["kubeletidentity"].object_id) if profile else ""


def declare_aks(config: AksConfig) -> dict[str, Any]:
    """Every resource of the stack, children of its components; the stack outputs."""
    from infra.targets.aks.config import triton_spec

    name, workload = config.common.name, config.workload
    client = azure.authorization.get_client_config_output()
    subscription = client.subscription_id
    cluster = AksCluster(name, config)
    group = cluster.group.name
    monitoring = AksMonitoring(
        f"{name}-monitoring",
        AksMonitoringArgs(
            name=name, location=config.location, resource_group=group,
            resource_group_id=cluster.group.id, cluster_id=cluster.cluster.id,
            cluster_name=cluster.cluster.name, namespace=workload.namespace, job=name,
            alerts=workload.alerts, budget=config.budget,
        ),
    )  # fmt: skip
    keda = WorkloadIdentity(
        f"{name}-keda",
        WorkloadIdentityArgs(
            identity_name=f"{name}-keda", resource_group=group, location=config.location,
            issuer=cluster.oidc_issuer, namespace=KEDA_NAMESPACE, service_account=KEDA_OPERATOR_SA,
            grants=(Grant(
                _role(subscription, identity.MONITORING_DATA_READER),
                monitoring.workspace.id,
            ),),
        ),
    )  # fmt: skip
    reader = WorkloadIdentity(
        f"{name}-triton",
        WorkloadIdentityArgs(
            identity_name=f"{name}-triton", resource_group=group, location=config.location,
            issuer=cluster.oidc_issuer, namespace=workload.namespace, service_account=name,
            grants=release_grants(subscription, config),
        ),
    )  # fmt: skip
    builder = WorkloadIdentity(  # a serving pod's identity cannot write engines/, this one only
        f"{name}-build",
        WorkloadIdentityArgs(
            identity_name=f"{name}-build", resource_group=group, location=config.location,
            issuer=cluster.oidc_issuer, namespace=workload.namespace,
            service_account=build_account_name(name), grants=engine_grants(subscription, config),
        ),
    )  # fmt: skip
    addons = ClusterAddons(
        name,
        ClusterAddonsArgs(
            cluster=cluster.ref,
            keda_identity=PodIdentity(
                keda_values=b.keda_pod_identity(keda.client_id, client.tenant_id),
                ready=keda.ready,
            ),
            keda_version=config.keda_version,
            gateway=config.workload.mme is not None,
            device_plugin=cluster.device_plugin,
        ),
    )
    spec = triton_spec(config, reader.client_id, builder.client_id, monitoring.query_url)
    outputs: dict[str, Any] = {}
    mme = workload.mme
    if mme is not None and mme.front_image is None:
        registry = FrontRegistry(
            f"{name}-front", stack_name=name, location=config.location, resource_group=group,
            subscription=subscription, tenant=client.tenant_id,
            kubelet_object_id=cluster.cluster.identity_profile.apply(_kubelet_object_id),
        )  # fmt: skip
        spec = with_front_image(spec, registry.ref)
        outputs["frontImage"] = registry.ref
    monitor = b.pod_monitor(spec.name, spec.namespace, spec.selector, spec.metrics_ports)
    TritonService(
        f"{name}-triton",
        TritonServiceArgs(
            spec=spec,
            provider=cluster.ref.provider,
            depends_on=addons.ready,
            own={f"{name}-podmonitor": monitor},
        ),
        opts=pulumi.ResourceOptions(depends_on=[*reader.ready, *builder.ready]),
    )
    return outputs | {
        "clusterName": cluster.cluster.name,
        "resourceGroup": group,
        "region": config.location,
        "kubeconfig": cluster.kubeconfig,
        "namespace": spec.namespace,
        "serviceName": spec.name,
        "tritonClientId": reader.client_id,
        "buildClientId": builder.client_id,
        "prometheusQueryUrl": monitoring.query_url,
        "dashboardUrl": monitoring.dashboard_url,
        "getCredentials": pulumi.Output.concat(
            "az aks get-credentials --resource-group ", group, " --name ", cluster.cluster.name
        ),
        "portForward": port_forward_command(spec),
        "invokeCommand": invoke_command(config.common.target, spec, config.release.url),
    }
