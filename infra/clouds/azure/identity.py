"""How a workload gets an Azure identity, whatever runs it (no Pulumi, no Azure SDK): the pod label
and ServiceAccount annotation Azure Workload Identity acts on, the federated credential's audience
and subject, and the built-in roles the kit grants, as ARM role definition ids.

Sources (read 2026-11-27): a pod is injected ``AZURE_CLIENT_ID``, ``AZURE_TENANT_ID`` and
``AZURE_FEDERATED_TOKEN_FILE`` when it carries the label ``azure.workload.identity/use: "true"``
and its ServiceAccount the annotation ``azure.workload.identity/client-id``
(learn.microsoft.com/azure/aks/workload-identity-overview); the federated credential's subject is
``system:serviceaccount:<namespace>:<name>`` (azure-aks-docs keda-workload-identity.md); the
role ids are learn.microsoft.com/azure/role-based-access-control/built-in-roles. The Pulumi
component that creates such an identity is ``workload_identity.py``.
"""

from __future__ import annotations

#: the pod label and ServiceAccount annotation Azure Workload Identity acts on
USE_LABEL = "azure.workload.identity/use"
CLIENT_ID_ANNOTATION = "azure.workload.identity/client-id"
#: the audience of the federated credentials (Entra's token exchange)
TOKEN_AUDIENCE = "api://AzureADTokenExchange"
#: built-in role definitions (learn.microsoft.com/azure/role-based-access-control/built-in-roles)
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
MONITORING_DATA_READER = "b0d8363b-8ddd-447d-831f-62ca05bff136"
ACR_PULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"


def subject(namespace: str, service_account: str) -> str:
    """The federated credential subject of a Kubernetes ServiceAccount."""
    return f"system:serviceaccount:{namespace}:{service_account}"


def role_definition(subscription: str, role: str) -> str:
    """The ARM id of the built-in role ``role`` (one of the ids above) in ``subscription``."""
    return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{role}"
