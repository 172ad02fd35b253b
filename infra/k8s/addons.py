"""Cluster add-ons the Triton workload relies on, installed from pinned Helm charts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.facts.kubernetes import KEDA_RELEASES

KEDA_CHART = "keda"
KEDA_REPO = "https://kedacore.github.io/charts"
#: default KEDA chart where the cluster's minor is not pinned by the stack (GKE release
#: channels): the newest in the table; EKS picks per minor (``infra.facts.kubernetes.keda_for``)
KEDA_CHART_VERSION = KEDA_RELEASES[0].version
KEDA_NAMESPACE = "keda"
KEDA_OPERATOR_SA = "keda-operator"
#: where the cloud does not provide them (EKS; GKE installs its own device plugin and autoscaler)
DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_REPO = "https://nvidia.github.io/k8s-device-plugin"
AUTOSCALER_CHART = "cluster-autoscaler"
AUTOSCALER_REPO = "https://kubernetes.github.io/autoscaler"
#: both charts run in the system namespace
SYSTEM_NAMESPACE = "kube-system"


def keda_values(pod_identity: Mapping[str, Any]) -> dict[str, Any]:
    """Helm values binding KEDA's operator to the cloud identity that may query Prometheus:
    ``pod_identity`` is the chart's ``podIdentity`` block, the target's (its values may be
    Pulumi outputs)."""
    return {
        "podIdentity": dict(pod_identity),
        "serviceAccount": {"operator": {"name": KEDA_OPERATOR_SA}},
        "resources": {
            "operator": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "1", "memory": "512Mi"},
            }
        },
    }
