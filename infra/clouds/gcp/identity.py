"""How a workload gets a Google Cloud identity (no Pulumi, no Google SDK): Workload Identity
Federation for GKE lets a Kubernetes ServiceAccount act as a Google service account once that
account grants ``roles/iam.workloadIdentityUser`` to the ServiceAccount's IAM member
(``serviceAccount:PROJECT.svc.id.goog[NAMESPACE/KSA]``, in the project's workload pool
``PROJECT.svc.id.goog``) and the ServiceAccount names it in the annotation
``iam.gke.io/gcp-service-account``.

Sources (checked 2026-12-07): GKE's "Authenticate to Google Cloud APIs from GKE workloads"
(https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity: the role, the member
and the annotation, as kubernetes/test-infra's workload-identity README quotes them) and the
Workload Identity Federation concept pages (the pool is named PROJECT_ID.svc.id.goog).
"""

from __future__ import annotations

#: the ServiceAccount annotation that names the Google service account its pods act as
SERVICE_ACCOUNT_ANNOTATION = "iam.gke.io/gcp-service-account"
#: the role a Google service account grants a Kubernetes ServiceAccount to act as it
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"


def workload_pool(project: str) -> str:
    """The project's workload identity pool (a GKE cluster's ``workload_identity_config``)."""
    return f"{project}.svc.id.goog"


def service_account_email(account_id: str, project: str) -> str:
    """The email of the Google service account ``account_id`` of ``project``."""
    return f"{account_id}@{project}.iam.gserviceaccount.com"


def workload_identity_member(project: str, namespace: str, ksa: str) -> str:
    """The IAM member a Kubernetes ServiceAccount becomes under Workload Identity."""
    return f"serviceAccount:{workload_pool(project)}[{namespace}/{ksa}]"
