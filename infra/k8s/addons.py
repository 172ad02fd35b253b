"""Cluster add-ons the Triton workload relies on, installed from pinned Helm charts."""

from __future__ import annotations

from typing import Any, Literal

KEDA_CHART = "keda"
KEDA_REPO = "https://kedacore.github.io/charts"
KEDA_CHART_VERSION = "2.16.1"  # KEDA 2.16: gcp and aws pod identity for the Prometheus scaler
KEDA_NAMESPACE = "keda"
KEDA_OPERATOR_SA = "keda-operator"


def keda_values(provider: Literal["gcp", "aws"], identity: Any) -> dict[str, Any]:
    """Helm values binding KEDA's operator to the cloud identity that may query Prometheus.

    ``identity`` is the Google service account email (Workload Identity) or the IAM role ARN
    (IRSA); it may be a Pulumi output.
    """
    if provider == "gcp":
        pod_identity: dict[str, Any] = {"gcp": {"enabled": True, "gcpIAMServiceAccount": identity}}
    else:
        pod_identity = {"aws": {"irsa": {"enabled": True, "roleArn": identity}}}
    return {
        "podIdentity": pod_identity,
        "serviceAccount": {"operator": {"name": KEDA_OPERATOR_SA}},
        "resources": {
            "operator": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "1", "memory": "512Mi"},
            }
        },
    }
