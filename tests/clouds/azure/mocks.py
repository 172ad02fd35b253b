"""What the azure-native provider answers under mocks (tests/infra/pulumi_harness.py reads
``MOCKS``): the caller's subscription and tenant, a cluster's user kubeconfig (base64, as AKS
returns it), and what Azure creates and reports for a resource (outputs that are not inputs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tests.infra.pulumi_harness import ProviderMocks

SUBSCRIPTION = "00000000-0000-0000-0000-00000000aaaa"
TENANT = "00000000-0000-0000-0000-00000000bbbb"
#: the caller's Entra access token (getClientToken), exchanged for an ACR refresh token
ENTRA_TOKEN = "eyJ.mock-entra-token"
KUBECONFIG = "YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg=="  # "apiVersion: v1\nkind: Config\n"

READS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "azure-native:authorization:getClientConfig": lambda args: {
        "subscriptionId": SUBSCRIPTION, "tenantId": TENANT, "clientId": "c", "objectId": "o",
    },
    "azure-native:authorization:getClientToken": lambda args: {"token": ENTRA_TOKEN},
    "azure-native:containerservice:listManagedClusterUserCredentials": lambda args: {
        "kubeconfigs": [{"name": "user", "value": KUBECONFIG}]
    },
}  # fmt: skip

REPORTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "azure-native:managedidentity:UserAssignedIdentity": lambda name: {
        "clientId": f"{name}-client-id", "principalId": f"{name}-principal-id", "tenantId": TENANT,
    },
    "azure-native:monitor:AzureMonitorWorkspace": lambda name: {
        "metrics": {"prometheusQueryEndpoint": f"https://{name}.eastus.prometheus.monitor.azure.com"}
    },
    "azure-native:containerservice:ManagedCluster": lambda name: {
        "oidcIssuerProfile": {"enabled": True, "issuerUrl": f"https://oidc.example/{name}/"},
        "identityProfile": {"kubeletidentity": {
            "clientId": f"{name}-kubelet-client-id", "objectId": f"{name}-kubelet-object-id",
            "resourceId": f"/subscriptions/{SUBSCRIPTION}/kubelet",
        }},
    },
    "azure-native:containerregistry:Registry": lambda name: {"loginServer": f"{name}.azurecr.io"},
}  # fmt: skip


def reports(type_token: str, name: str, state: Mapping[str, Any]) -> dict[str, Any]:
    report = REPORTS.get(type_token)
    return report(name) if report else {}


MOCKS = ProviderMocks(reads=READS, reports=reports)
