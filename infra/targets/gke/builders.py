"""Pure data for the GKE target: GPU offers, names, IAM conditions, kubeconfig, dashboards."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infra.clouds.gcp.identity import SERVICE_ACCOUNT_ANNOTATION, workload_identity_member
from infra.clouds.gcp.versions import GKE_CHANNELS
from infra.k8s import promql
from infra.k8s.addons import KEDA_NAMESPACE, KEDA_OPERATOR_SA
from infra.k8s.alerts import AlertRule
from infra.k8s.spec import GPU_POOL, POOL_LABEL, PrometheusSource, WorkloadIdentity
from packager.tensorrt.engines import ENGINES_PREFIX


@dataclass(frozen=True)
class Accelerator:
    """A GPU GKE offers for node pools, the machine family it attaches to, and why pick it."""

    machine_prefix: str
    why: str


#: GPUs the kit deploys on GKE (accelerator type -> machine family + reason).
ACCELERATORS: dict[str, Accelerator] = {
    "nvidia-tesla-t4": Accelerator("n1-", "T4 16 GB: lowest cost per inference, N1 machines"),
    "nvidia-l4": Accelerator("g2-", "L4 24 GB: the T4 successor, G2 machines"),
    "nvidia-tesla-a100": Accelerator("a2-highgpu-", "A100 40 GB for large models, A2 machines"),
    "nvidia-a100-80gb": Accelerator("a2-ultragpu-", "A100 80 GB, A2 ultra machines"),
    "nvidia-h100-80gb": Accelerator("a3-highgpu-", "H100 80 GB, A3 machines"),
}

#: GPUs GKE still lists but the kit refuses, with the reason shown to the user.
_OLD = "older generation: TensorRT 10 in current Triton images targets Turing (T4) and newer"
REFUSED_ACCELERATORS: dict[str, str] = {
    "nvidia-tesla-k80": "retired by Google Cloud (Kepler, unsupported by CUDA 12)",
    "nvidia-tesla-p4": _OLD,
    "nvidia-tesla-p100": _OLD,
    "nvidia-tesla-v100": _OLD,
}

#: Google APIs the stack calls, enabled by the stack itself (never disabled on destroy: other
#: workloads of the project may use them). What needs each one:
REQUIRED_SERVICES: dict[str, str] = {
    "cloudresourcemanager.googleapis.com": "project IAM bindings",
    "compute.googleapis.com": "VPC, subnet, router, Cloud NAT, node VMs",
    "container.googleapis.com": "the GKE cluster and node pools",
    "iam.googleapis.com": "service accounts and their bindings",
    "iamcredentials.googleapis.com": "Workload Identity tokens of Triton and KEDA",
    "logging.googleapis.com": "cluster and workload logs",
    "monitoring.googleapis.com": "Managed Prometheus, dashboard, alert policies",
    "storage.googleapis.com": "the release bucket's IAM binding and model downloads",
}

#: GKE release channels, EXTENDED included (infra/clouds/gcp/versions.py GKE_CHANNELS)
RELEASE_CHANNELS: tuple[str, ...] = tuple(GKE_CHANNELS)
GPU_DRIVER_VERSIONS: tuple[str, ...] = ("DEFAULT", "LATEST")


def triton_account_id(name: str) -> str:
    """Account id of the Google service account Triton pods act as (6-30 characters: the
    name table in ``infra/values/names.py`` refuses a ``name`` too long for it, up front)."""
    return f"{name}-triton"


def build_account_id(name: str) -> str:
    """Account id of the Google service account ``tdk build``'s Job acts as, the only one that
    writes the release's engine cache (as long as ``triton_account_id``'s, so the same ``name``
    limit holds)."""
    return f"{name}-build"


def keda_account_id(name: str) -> str:
    return f"{name}-keda"


def node_account_id(name: str) -> str:
    return f"{name}-nodes"


def keda_identity_member(project: str) -> str:
    return workload_identity_member(project, KEDA_NAMESPACE, KEDA_OPERATOR_SA)


def managed_prometheus_url(project: str) -> str:
    """Google Managed Prometheus's Prometheus-compatible query API for ``project``."""
    return f"https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus"


#: The role that lets Triton's identity read the bucket's metadata: Triton's GCS reader calls
#: ``GetBucketMetadata`` before every directory test and listing
#: (triton-inference-server/core ``src/filesystem/implementations/gcs.h``, ``IsDirectory``, read
#: 2026-12-07), which needs ``storage.buckets.get``; ``roles/storage.objectViewer`` lacks it.
#: Storage Legacy Bucket Reader grants ``storage.buckets.get`` and object listing (names and
#: metadata when listing), never an object's content (cloud.google.com/iam/docs/roles-permissions/
#: storage, read 2026-12-07); listing is already bucket-wide under the read condition below. A
#: custom role with only ``storage.buckets.get`` would need the deployer to hold
#: ``iam.roles.create``, and a deleted custom role is kept 7 days (it can be undeleted) before it
#: is gone (cloud.google.com/iam/docs/reference/rest/v1/projects.roles/delete, read 2026-12-07),
#: so its ID is not free for a ``pulumi up`` right after ``pulumi destroy``.
BUCKET_METADATA_ROLE = "roles/storage.legacyBucketReader"


def release_read_condition(bucket: str, prefix: str) -> dict[str, str]:
    """IAM condition: objects are readable only under the release prefix.

    Listing is a bucket-level permission, so the bucket itself stays visible (names only);
    object reads outside ``prefix/`` are denied.
    """
    objects = f"projects/_/buckets/{bucket}/objects/"
    scope = f"{objects}{prefix}/" if prefix else objects
    return {
        "title": "release-prefix-only",
        "description": f"read gs://{bucket}/{prefix} only",
        "expression": (
            f'resource.name.startsWith("{scope}") || resource.name == "projects/_/buckets/{bucket}"'
        ),
    }


def engine_cache_condition(bucket: str, prefix: str) -> dict[str, str]:
    """IAM condition: objects are writable only in the release's engine cache
    (``ENGINES_PREFIX``), where ``tdk build``'s Job uploads TensorRT engines as the engine builder
    (never Triton's identity, which only reads them; the earlier ``plans/`` layout is still
    read, with the read grant; nothing writes it)."""
    objects = f"projects/_/buckets/{bucket}/objects/"
    scope = f"{objects}{prefix}/{ENGINES_PREFIX}" if prefix else f"{objects}{ENGINES_PREFIX}"
    return {
        # kept as deployed: a binding's condition is part of its identity, so a new title
        # would replace the live IAM binding (issue 50 item 3 renamed the code, not this)
        "title": "plan-cache-only",
        "description": f"write gs://{bucket}/{prefix + '/' if prefix else ''}{ENGINES_PREFIX}",
        "expression": f'resource.name.startsWith("{scope}")',
    }


def gpu_node_labels() -> dict[str, str]:
    return {POOL_LABEL: GPU_POOL}


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig that authenticates with ``gke-gcloud-auth-plugin`` (no keys stored)."""
    context = f"gke-{cluster_name}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {
                    "server": f"https://{endpoint}",
                    "certificate-authority-data": ca_certificate,
                },
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "provideClusterInfo": True,
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
    }
    return json.dumps(config)


def dashboard_json(title: str, namespace: str, job: str, multi_model: bool = False) -> str:
    """Cloud Monitoring dashboard: one PromQL chart per figure, two per row (an ``mme``
    workload's multi-model figures too)."""
    tiles = []
    charted = promql.dashboard_figures(namespace, job, multi_model)
    for index, (figure, query) in enumerate(charted.items()):
        tiles.append(
            {
                "xPos": (index % 2) * 24,
                "yPos": (index // 2) * 16,
                "width": 24,
                "height": 16,
                "widget": {
                    "title": figure,
                    "xyChart": {
                        "dataSets": [
                            {"timeSeriesQuery": {"prometheusQuery": query}, "plotType": "LINE"}
                        ]
                    },
                },
            }
        )
    return json.dumps({"displayName": title, "mosaicLayout": {"columns": 48, "tiles": tiles}})


def alert_policy_args(rule: AlertRule, channels: list[Any]) -> dict[str, Any]:
    """Arguments of a ``gcp.monitoring.AlertPolicy`` evaluating ``rule`` with PromQL."""
    return {
        "display_name": rule.name,
        "combiner": "OR",
        "severity": rule.severity.upper(),  # CRITICAL | ERROR | WARNING, as in Prometheus
        "conditions": [
            {
                "display_name": rule.name,
                "condition_prometheus_query_language": {
                    "query": rule.query,
                    "duration": f"{rule.for_seconds}s",
                    "evaluation_interval": "60s",
                },
            }
        ],
        "documentation": {"content": rule.documentation, "mime_type": "text/markdown"},
        "notification_channels": channels,
    }


@dataclass(frozen=True)
class GpuPool:
    """The GPU node pool as configured: accelerator, machine, bounds, spot."""

    accelerator: str
    machine_type: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    spot: bool
    driver_version: str
    zones: tuple[str, ...]


NODE_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def gpu_node_pool_args(pool: GpuPool, node_service_account: Any) -> dict[str, Any]:
    """``gcp.container.NodePool`` arguments: accelerator with managed driver install,
    autoscaling down to zero, optional spot, the pool label (GKE adds the GPU taint)."""
    args: dict[str, Any] = {
        # per zone; 0 keeps a scale-to-zero pool from starting (and billing) GPU nodes
        "initial_node_count": 0 if pool.min_nodes == 0 else 1,
        "autoscaling": {
            "total_min_node_count": pool.min_nodes,
            "total_max_node_count": pool.max_nodes,
            "location_policy": "ANY",
        },
        "management": {"auto_repair": True, "auto_upgrade": True},
        "node_config": {
            "machine_type": pool.machine_type,
            "spot": pool.spot,
            "service_account": node_service_account,
            "oauth_scopes": NODE_SCOPES,
            "labels": gpu_node_labels(),
            # no taints: GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule itself (when
            # the cluster has a non-GPU pool), and declaring it again fails the pool
            "guest_accelerators": [
                {
                    "type": pool.accelerator,
                    "count": pool.gpus_per_node,
                    "gpu_driver_installation_config": {"gpu_driver_version": pool.driver_version},
                }
            ],
            "workload_metadata_config": {"mode": "GKE_METADATA"},
            "shielded_instance_config": {"enable_secure_boot": True},
            "disk_size_gb": 200,
            "disk_type": "pd-balanced",
        },
        "upgrade_settings": {"max_surge": 1, "max_unavailable": 0},
    }
    if pool.zones:
        args["node_locations"] = list(pool.zones)
    return args


def system_node_pool_args(machine_type: str, max_nodes: int, node_service_account: Any) -> dict:
    """The untainted CPU pool for KEDA, system pods and CPU workloads that spill over."""
    return {
        "autoscaling": {"total_min_node_count": 1, "total_max_node_count": max_nodes},
        "management": {"auto_repair": True, "auto_upgrade": True},
        "node_config": {
            "machine_type": machine_type,
            "service_account": node_service_account,
            "oauth_scopes": NODE_SCOPES,
            "workload_metadata_config": {"mode": "GKE_METADATA"},
            "shielded_instance_config": {"enable_secure_boot": True},
        },
    }


#: Least privilege for node VMs: logs, metrics, image pulls; no storage or admin roles.
NODE_ROLES: tuple[str, ...] = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)


def authorized_networks(cidrs: Sequence[str]) -> dict[str, Any] | None:
    """Control-plane allow list; None (no restriction beyond authentication) when empty."""
    if not cidrs:
        return None
    return {"cidr_blocks": [{"cidr_block": cidr, "display_name": cidr} for cidr in cidrs]}


#: IAM serviceAccounts displayName: at most 100 characters
#: (https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts, checked
#: 2026-11-24)
SA_DISPLAY_NAME_MAX = 100


def sa_display_name(text: str) -> str:
    """``text`` cut to the displayName limit (a long release URL must not fail the stack)."""
    if len(text) <= SA_DISPLAY_NAME_MAX:
        return text
    return text[: SA_DISPLAY_NAME_MAX - 3] + "..."


#: Service annotations per ``k8sServiceExposure`` (GKE's load balancer kinds)
LOAD_BALANCER_ANNOTATIONS: dict[str, dict[str, str]] = {
    "internal-lb": {"networking.gke.io/load-balancer-type": "Internal"},
    "external-lb": {},
}


# --- the Kubernetes layer's hooks (infra/k8s): pod identity, metrics query auth -----------
def workload_identity(email: Any) -> WorkloadIdentity:
    """Triton's pods run as a Google service account through Workload Identity: the
    ServiceAccount names it."""
    return WorkloadIdentity(service_account={SERVICE_ACCOUNT_ANNOTATION: email})


def keda_pod_identity(email: Any) -> dict[str, Any]:
    """KEDA's operator runs as a Google service account through Workload Identity (the chart's
    ``podIdentity.gcp``)."""
    return {"gcp": {"enabled": True, "gcpIAMServiceAccount": email}}


def managed_prometheus_source(project: str) -> PrometheusSource:
    """KEDA queries Google Managed Prometheus as its Workload Identity (KEDA's ``gcp``
    provider); Triton reads ``gs://`` itself, so the gke target has no model sync."""
    return PrometheusSource(managed_prometheus_url(project), "gcp")
