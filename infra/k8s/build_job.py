"""Pure builder: the Kubernetes Job that builds a TensorRT engine on the stack's GPU pool.

Three steps in one pod, placed as the stack's Triton pods (same namespace, GPU-pool
nodeSelector and toleration) but as the workload's build ServiceAccount
(``build_service_account``): its cloud identity is the only one that writes the release's
engine cache, which the serving pods' identity only reads, so no serving pod can plant one:

1. ``fetch`` (the cloud's CLI image): copies the entry's ``input/`` (``<release>/engines/...``);
2. ``build`` (NVIDIA's TensorRT container of the Triton image's release, one GPU): runs
   ``pod_build.py``: trtexec builds the engine, runs it on the parity inputs, compares with
   ONNX Runtime's outputs; an engine outside the tolerance fails the pod and is never uploaded;
3. ``upload`` (the cloud's CLI image): writes ``model.plan`` then ``plan.json`` to the cache.

What differs between clouds (the CLI image, its copy commands) comes from the target as a
``StoreCopy``; this module names no cloud.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from infra.k8s.manifests import placement
from infra.k8s.spec import TritonServiceSpec

Manifest = dict[str, Any]
WORK = "/work"
#: a Job's pod is retried never (a failed build or parity is an answer, not a flake) and
#: kept a day for `kubectl logs`
TTL_SECONDS = 86400


@dataclass(frozen=True)
class StoreCopy:
    """How a pod copies the cache entry's files with the build's cloud identity: the CLI
    image, the command that fetches ``<entry>/input/`` into ``WORK`` and the one that uploads
    ``WORK/model.plan`` then ``WORK/plan.json`` with their sha256 as object metadata."""

    image: str
    fetch: list[str]
    upload: list[str]
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildJobSpec:
    """One engine build: the Job's name, the workload it builds for, the images, the deadline."""

    name: str
    workload: TritonServiceSpec
    tensorrt_image: str
    copy: StoreCopy
    deadline_seconds: int
    labels: Mapping[str, str] = field(default_factory=dict)


def _labels(workload: TritonServiceSpec) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "tdk-build",
        "app.kubernetes.io/instance": workload.name,
        "app.kubernetes.io/managed-by": "triton-deploy-kit",
    }


def build_service_account(workload: TritonServiceSpec) -> Manifest:
    """The ServiceAccount the build Job runs as, bound to the target's engine-builder identity
    (``workload.builder``); a pod of the workload never runs as it. No token is mounted unless
    a pod asks (the Job's does, for its cloud identity)."""
    metadata: dict[str, Any] = {
        "name": workload.build_service_account,
        "namespace": workload.namespace,
        "labels": _labels(workload),
    }
    if workload.builder.service_account:
        metadata["annotations"] = dict(workload.builder.service_account)
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata,
        "automountServiceAccountToken": False,
    }


def _security() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def _copy_container(name: str, spec: BuildJobSpec, command: list[str]) -> dict[str, Any]:
    env = {"HOME": "/tmp", **spec.workload.env, **spec.copy.env}
    return {
        "name": name,
        "image": spec.copy.image,
        "imagePullPolicy": "IfNotPresent",
        "command": command,
        "env": [{"name": k, "value": v} for k, v in sorted(env.items())],
        "resources": {
            "requests": {"cpu": "500m", "memory": "512Mi"},
            "limits": {"cpu": "2", "memory": "2Gi"},
        },
        "securityContext": _security(),
        "volumeMounts": [{"name": "work", "mountPath": WORK}],
    }


def _build_container(spec: BuildJobSpec) -> dict[str, Any]:
    gpu = {"nvidia.com/gpu": str(max(spec.workload.resources.gpus, 1))}
    return {
        "name": "build",
        "image": spec.tensorrt_image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["python3", f"{WORK}/pod_build.py", WORK],
        "workingDir": WORK,
        "env": [{"name": "HOME", "value": "/tmp"}],
        "resources": {
            "requests": {"cpu": "2", "memory": "8Gi", **gpu},
            "limits": {"cpu": "4", "memory": "16Gi", **gpu},
        },
        "securityContext": _security(),
        "volumeMounts": [{"name": "work", "mountPath": WORK}],
    }


def build_job(spec: BuildJobSpec) -> Manifest:
    """The Job (batch/v1) that builds, checks and uploads one engine."""
    workload = spec.workload
    labels = {**_labels(workload), **spec.labels}
    pod_spec: dict[str, Any] = {
        "serviceAccountName": workload.build_service_account,
        "automountServiceAccountToken": True,  # projected token: Workload Identity / IRSA
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000},
        "initContainers": [
            _copy_container("fetch", spec, spec.copy.fetch),
            _build_container(spec),
        ],
        "containers": [_copy_container("upload", spec, spec.copy.upload)],
        "volumes": [{"name": "work", "emptyDir": {}}],
        **placement(_on_gpus(workload)),
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": spec.name, "namespace": workload.namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": spec.deadline_seconds,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "template": {
                "metadata": {"labels": {**labels, **workload.builder.pod_labels}},
                "spec": pod_spec,
            },
        },
    }


def _on_gpus(workload: TritonServiceSpec) -> TritonServiceSpec:
    """The workload as placed on the GPU pool (a CPU workload's stack still has the pool)."""
    return workload if workload.kind == "gpu" else replace(workload, kind="gpu")
