"""Azure's identity rules (infra/clouds/azure/identity.py): the federated subject, a built-in
role's ARM id, and an ABAC condition that confines data actions and listings to a prefix."""

from __future__ import annotations

from infra.clouds.azure import identity


def test_subject_and_role_definition() -> None:
    assert identity.subject("keda", "keda-operator") == "system:serviceaccount:keda:keda-operator"
    role = identity.role_definition("sub", identity.ACR_PULL)
    prefix = "/subscriptions/sub/providers/Microsoft.Authorization/roleDefinitions/"
    assert role == prefix + identity.ACR_PULL


def test_only_under_bounds_each_action_by_path_and_listing_by_request_prefix() -> None:
    condition = identity.only_under(("read", "write"), "v1/engines/")
    on_path, listing = condition.split(") AND ((!(ActionMatches")
    assert "blobs:path] StringStartsWith 'v1/engines/'" in on_path
    assert "blobs/read'} AND NOT SubOperationMatches{'Blob.List'}" in on_path
    assert "blobs/write'}" in on_path
    assert "blobs:prefix] StringStartsWith 'v1/engines/'" in listing
