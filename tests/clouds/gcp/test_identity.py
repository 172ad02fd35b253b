"""Google Cloud's identity rules (infra/clouds/gcp/identity.py): a ServiceAccount's IAM member
lies in the project's workload pool, and a service account's email in its project."""

from __future__ import annotations

from infra.clouds.gcp import identity


def test_member_names_the_pool_namespace_and_service_account() -> None:
    member = identity.workload_identity_member("proj", "triton", "svc")
    assert member == "serviceAccount:proj.svc.id.goog[triton/svc]"
    assert identity.workload_pool("proj") in member


def test_service_account_email_is_in_its_project() -> None:
    assert (
        identity.service_account_email("x-triton", "proj")
        == "x-triton@proj.iam.gserviceaccount.com"
    )
