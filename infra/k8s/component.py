"""``tdk:k8s:TritonService``: applies the pure manifests with pulumi_kubernetes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.k8s import gateway, manifests
from infra.k8s.build_job import build_service_account
from infra.k8s.manifests import Manifest
from infra.k8s.spec import TritonServiceSpec


@dataclass
class TritonServiceArgs:
    """The workload's plain spec, the cluster's provider, and what must exist first (KEDA).

    ``own`` are the target's own manifests for the workload (resource name -> manifest: the
    object its cloud's managed Prometheus scrapes through), declared in the workload's
    namespace under this component."""

    spec: TritonServiceSpec
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)
    create_namespace: bool = True
    own: Mapping[str, Manifest] = field(default_factory=dict)


class TritonService(pulumi.ComponentResource):
    """One Triton workload: ServiceAccount (and the engine build's), Deployment, Service, PDB,
    KEDA scaling, monitoring;
    in ``mme`` mode the Gateway, route and hashing policy in front of it."""

    def __init__(
        self, name: str, args: TritonServiceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:k8s:TritonService", name, None, opts)
        spec = args.spec
        base = pulumi.ResourceOptions(parent=self, provider=args.provider)
        created: list[pulumi.Resource] = []
        if args.create_namespace:
            created.append(_apply(f"{name}-ns", manifests.namespace(spec), base))
        core = pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(depends_on=created))
        self.service_account = _apply(f"{name}-sa", manifests.service_account(spec), core)
        # tdk build's Job runs as this one: the only identity that writes the engine cache
        _apply(f"{name}-build-sa", build_service_account(spec), core)
        # KEDA's HPA owns the replica count (the manifest leaves it out; never reset it).
        # Ready may need a GPU node from zero first: wait for that, not the 10-minute default.
        wait = f"{spec.rollout_timeout_seconds}s"
        self.deployment = _apply(
            f"{name}-deploy",
            manifests.deployment(spec),
            pulumi.ResourceOptions.merge(
                core,
                pulumi.ResourceOptions(
                    depends_on=[self.service_account],
                    ignore_changes=["spec.replicas"],
                    custom_timeouts=pulumi.CustomTimeouts(create=wait, update=wait),
                ),
            ),
        )
        self.service = _apply(f"{name}-svc", manifests.service(spec), core)
        self.pdb = _apply(f"{name}-pdb", manifests.pod_disruption_budget(spec), core)
        after_keda = pulumi.ResourceOptions.merge(
            core, pulumi.ResourceOptions(depends_on=[*created, *args.depends_on])
        )
        auth = _apply(f"{name}-keda-auth", manifests.trigger_authentication(spec), after_keda)
        self.scaled_object = _apply(
            f"{name}-scaler",
            manifests.scaled_object(spec),
            pulumi.ResourceOptions.merge(
                after_keda, pulumi.ResourceOptions(depends_on=[auth, self.deployment])
            ),
        )
        if spec.pod_monitoring:
            _apply(f"{name}-podmonitoring", manifests.pod_monitoring(spec), core)
        # mme mode: Envoy Gateway's objects, once its chart (their CRDs) is installed
        for manifest in gateway.gateway_manifests(spec):
            _apply(f"{name}-{manifest['kind'].lower()}", manifest, after_keda)
        for resource_name, manifest in args.own.items():
            _apply(resource_name, manifest, core)
        self.register_outputs(
            {
                "namespace": spec.namespace,
                "serviceName": spec.name,
                "scalingQuery": manifests.scaling_query(spec),
            }
        )


def _apply(name: str, manifest: Manifest, opts: pulumi.ResourceOptions) -> Any:
    """Declare one manifest as its typed pulumi_kubernetes resource (custom kinds generically)."""
    kind = manifest["kind"]
    metadata = manifest["metadata"]
    if kind == "Namespace":
        return k8s.core.v1.Namespace(name, metadata=metadata, opts=opts)
    if kind == "ServiceAccount":
        return k8s.core.v1.ServiceAccount(
            name,
            metadata=metadata,
            automount_service_account_token=manifest["automountServiceAccountToken"],
            opts=opts,
        )
    typed = {
        "Deployment": k8s.apps.v1.Deployment,
        "Service": k8s.core.v1.Service,
        "PodDisruptionBudget": k8s.policy.v1.PodDisruptionBudget,
    }
    if kind in typed:
        return typed[kind](name, metadata=metadata, spec=manifest["spec"], opts=opts)
    return k8s.apiextensions.CustomResource(
        name,
        api_version=manifest["apiVersion"],
        kind=kind,
        metadata=metadata,
        spec=manifest["spec"],
        opts=opts,
    )
