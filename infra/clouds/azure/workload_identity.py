"""``tdk:azure:WorkloadIdentity``: a user-assigned managed identity that one Kubernetes
ServiceAccount runs as (a federated credential on the cluster's OIDC issuer), with its roles;
what it is made of (audience, subject, role ids) is ``identity.py``. ``role_assignment`` grants
a role to any service principal (a container registry's AcrPull for a cluster's kubelet too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_azure_native as azure

from infra.clouds.azure.identity import TOKEN_AUDIENCE, subject


@dataclass(frozen=True)
class Grant:
    """One role: its definition's ARM id, the scope (an ARM id) it is granted on, and an ABAC
    condition narrowing it (version 2.0), or None."""

    role: pulumi.Input[str]
    scope: pulumi.Input[str]
    condition: str | None = None


@dataclass(frozen=True)
class WorkloadIdentityArgs:
    """Who (namespace/service account on the cluster's issuer) gets which role where."""

    identity_name: str
    resource_group: pulumi.Input[str]
    location: str
    issuer: pulumi.Input[str]
    namespace: str
    service_account: str
    grants: tuple[Grant, ...]


class WorkloadIdentity(pulumi.ComponentResource):
    """The identity (``client_id``, ``principal_id``) and what pods wait for (``ready``)."""

    def __init__(
        self, name: str, args: WorkloadIdentityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:azure:WorkloadIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.identity = azure.managedidentity.UserAssignedIdentity(
            name,
            resource_name_=args.identity_name,
            resource_group_name=args.resource_group,
            location=args.location,
            opts=child,
        )
        federated = azure.managedidentity.FederatedIdentityCredential(
            f"{name}-federated",
            federated_identity_credential_resource_name=f"{args.namespace}-{args.service_account}",
            resource_name_=self.identity.name,
            resource_group_name=args.resource_group,
            issuer=args.issuer,
            subject=subject(args.namespace, args.service_account),
            audiences=[TOKEN_AUDIENCE],
            opts=child,
        )
        grants = [
            role_assignment(
                f"{name}-role" + (f"-{i}" if i else ""), self.identity.principal_id, grant, child
            )
            for i, grant in enumerate(args.grants)
        ]
        self.client_id = self.identity.client_id
        self.principal_id = self.identity.principal_id
        self.ready: list[pulumi.Resource] = [federated, *grants]
        self.register_outputs({"clientId": self.client_id})


def role_assignment(
    name: str, principal_id: pulumi.Input[str], grant: Grant, opts: pulumi.ResourceOptions
) -> azure.authorization.RoleAssignment:
    """``grant`` given to a service principal (a managed identity, a cluster's kubelet
    identity): the one place the kit declares an Azure role assignment."""
    return azure.authorization.RoleAssignment(
        name,
        principal_id=principal_id,
        principal_type="ServicePrincipal",
        role_definition_id=grant.role,
        scope=grant.scope,
        **_condition(grant),
        opts=opts,
    )


def _condition(grant: Grant) -> dict[str, Any]:
    if grant.condition is None:
        return {}
    return {"condition": grant.condition, "condition_version": "2.0"}
