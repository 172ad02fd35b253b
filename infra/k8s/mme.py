"""``k8sModelMode: mme``: the pod's second container, the kit's front (``tdk front serve``).

Triton runs in explicit model-control mode on an empty ``/models``; the front beside it answers
SageMaker's contract and Triton's v2 inference by name on :data:`FRONT_PORT`, fetches a copy's
archive from the release on its first request (the pod's workload identity), checks it against
the manifest, extracts it under ``/cache`` and loads it into ``/models``. Both directories are
emptyDirs the two containers share; ``/cache`` has a size limit (the kubelet evicts a pod past
it: emptyDir ``sizeLimit``, https://kubernetes.io/docs/concepts/storage/volumes/#emptydir,
checked 2026-12-07). Readiness is the front's ``/ping`` (Triton and the front up), never that
models are loaded: a pod with nothing loaded serves.
"""

from __future__ import annotations

from typing import Any

from infra.k8s.spec import (
    FRONT_CACHE_PATH,
    FRONT_PORT,
    GRPC_PORT,
    HTTP_PORT,
    MODEL_SYNC_PATH,
    FrontSpec,
    TritonServiceSpec,
)
from infra.k8s.store_access import access_env, access_mounts

#: the front's own share of the pod: one process serving HTTP and copying archives
FRONT_REQUESTS = {"cpu": "500m", "memory": "512Mi"}
FRONT_LIMITS = {"cpu": "1", "memory": "1Gi"}
#: the volumes both containers mount (``models``: what Triton loads; ``front-cache``: archives)
MODELS_VOLUME = "models"
CACHE_VOLUME = "front-cache"
#: the workload Service's one port in ``mme`` mode: the front (the Gateway's backend)
SERVICE_PORT = {"name": "front", "port": FRONT_PORT, "targetPort": "front", "protocol": "TCP"}


def front_args(front: FrontSpec) -> list[str]:
    """The front's command line (the contract ``tdk front serve`` implements)."""
    return [
        "tdk",
        "front",
        "serve",
        "--release",
        front.release_url,
        "--triton-url",
        f"http://127.0.0.1:{HTTP_PORT}",
        "--triton-grpc",  # loads over gRPC: an HTTP load holds a Triton HTTP thread
        f"127.0.0.1:{GRPC_PORT}",
        "--model-dir",
        MODEL_SYNC_PATH,
        "--cache-dir",
        FRONT_CACHE_PATH,
        "--cache-bytes",
        str(front.cache_bytes),
        "--memory-budget-bytes",
        str(front.memory_budget_bytes),
        "--listen",
        f"0.0.0.0:{FRONT_PORT}",
    ]


def _probe(failure_threshold: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": "/ping", "port": "front"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": failure_threshold,
    }


def front_container(spec: TritonServiceSpec, front: FrontSpec) -> dict[str, Any]:
    """The front container: the pod's serving port, its probes, the shared volumes."""
    args = front_args(front)
    return {
        "name": "front",
        "image": front.image,
        "imagePullPolicy": "IfNotPresent",
        "command": args[:1],
        "args": args[1:],
        "ports": [{"name": "front", "containerPort": FRONT_PORT, "protocol": "TCP"}],
        "env": [
            *({"name": key, "value": value} for key, value in sorted(spec.env.items())),
            *access_env(spec.store_access),
        ],
        "resources": {"requests": dict(FRONT_REQUESTS), "limits": dict(FRONT_LIMITS)},
        # Triton starts on an empty repository in well under a minute; the front waits for it
        "startupProbe": _probe(12),
        "readinessProbe": _probe(3),
        "livenessProbe": _probe(6),
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": MODELS_VOLUME, "mountPath": MODEL_SYNC_PATH},
            {"name": CACHE_VOLUME, "mountPath": FRONT_CACHE_PATH},
            *access_mounts(spec.store_access),
        ],
    }


def front_volumes(front: FrontSpec) -> list[dict[str, Any]]:
    """``/models`` (what Triton loads) and ``/cache`` (the archives, bounded)."""
    return [
        {"name": MODELS_VOLUME, "emptyDir": {}},
        {"name": CACHE_VOLUME, "emptyDir": {"sizeLimit": str(front.cache_bytes)}},
    ]
