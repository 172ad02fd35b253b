"""How a workload gets an Azure identity, whatever runs it (no Pulumi, no Azure SDK): the pod label
and ServiceAccount annotation Azure Workload Identity acts on, the federated credential's audience
and subject, and the built-in roles the kit grants, as ARM role definition ids.

Sources (read 2026-11-27): a pod is injected ``AZURE_CLIENT_ID``, ``AZURE_TENANT_ID`` and
``AZURE_FEDERATED_TOKEN_FILE`` when it carries the label ``azure.workload.identity/use: "true"``
and its ServiceAccount the annotation ``azure.workload.identity/client-id``
(learn.microsoft.com/azure/aks/workload-identity-overview); the federated credential's subject is
``system:serviceaccount:<namespace>:<name>`` (azure-aks-docs keda-workload-identity.md); the
role ids are learn.microsoft.com/azure/role-based-access-control/built-in-roles. Role assignment
conditions on a blob path prefix (ABAC, condition version 2.0): MicrosoftDocs/azure-docs
``articles/storage/blobs/storage-auth-abac-examples.md`` ("Read or list blobs in named containers
with a path": one clause for ``blobs/read`` ``AND NOT SubOperationMatches{'Blob.List'}`` on
``@Resource[...blobs:path]``, one for ``Blob.List`` on ``@Request[...blobs:prefix]``) and
``storage-auth-abac-attributes.md`` (List Blobs' only request attribute is the blob prefix; it has
no blob path; the Storage Blob Data Contributor actions ``write``, ``add/action``, ``delete``,
``move/action`` all carry the path), both read 2026-12-07 at 0085f2c. The Pulumi component that
creates such an identity is ``workload_identity.py``.
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


_BLOBS = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs"
_PATH = f"@Resource[{_BLOBS}:path]"
_PREFIX = f"@Request[{_BLOBS}:prefix]"
#: List Blobs is the ``blobs/read`` data action's ``Blob.List`` suboperation
_LIST = "SubOperationMatches{'Blob.List'}"


def _action(action: str) -> str:
    """One data action on a blob; ``read`` is every read but List Blobs (which has no path)."""
    matches = f"ActionMatches{{'{_BLOBS}/{action}'}}"
    return f"{matches} AND NOT {_LIST}" if action == "read" else matches


def only_under(actions: tuple[str, ...], prefix: str) -> str:
    """An ABAC condition: ``actions`` only on blobs whose name starts with ``prefix``, and List
    Blobs only with a request prefix that starts with it. List Blobs carries no blob path, so a
    path condition on ``blobs/read`` alone cannot be evaluated for it and denies every listing
    (the documented "Read or list blobs in named containers with a path" form, see the
    module's sources)."""
    none_of = " AND ".join(f"!({_action(a)})" for a in actions)
    on_path = f"(({none_of}) OR ({_PATH} StringStartsWith '{prefix}'))"
    listing = (
        f"((!(ActionMatches{{'{_BLOBS}/read'}} AND {_LIST})) "
        f"OR ({_PREFIX} StringStartsWith '{prefix}'))"
    )
    return f"{on_path} AND {listing}"
