"""Pure builders: a ``TritonServiceSpec`` in, plain Kubernetes manifests (dicts) out.

Pulumi applies exactly these dicts and ``tdk render k8s`` writes them as YAML, so GitOps
users and Pulumi users run the same workload.
"""

from __future__ import annotations

from typing import Any

from infra.k8s import gateway, mme, promql
from infra.k8s.spec import (
    ENGINE_HOME,
    GPU_POOL,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GRPC_PORT,
    HTTP_PORT,
    METRICS_PORT,
    POOL_LABEL,
    WEIGHT_CACHE_MOUNT,
    ModelSync,
    TritonServiceSpec,
)
from infra.k8s.store_access import access_env, access_mounts, access_volumes

Manifest = dict[str, Any]
PROBE_PERIOD_SECONDS = 10


def _metadata(spec: TritonServiceSpec, name: str | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name or spec.name,
        "namespace": spec.namespace,
        "labels": spec.labels,
    }
    meta.update({key: value for key, value in extra.items() if value})
    return meta


def namespace(spec: TritonServiceSpec) -> Manifest:
    """The workload's namespace."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": spec.namespace, "labels": {"app.kubernetes.io/part-of": "tdk"}},
    }


def service_account(spec: TritonServiceSpec) -> Manifest:
    """The pods' identity, bound to the cloud identity that reads only the release prefix."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _metadata(spec, annotations=dict(spec.identity.service_account)),
        "automountServiceAccountToken": False,
    }


def triton_args(spec: TritonServiceSpec) -> list[str]:
    """``tritonserver`` command line: load every model of the release, ready only when loaded;
    in ``mme`` mode an empty repository whose models the front loads and unloads (explicit
    control), ready while serving whatever is loaded."""
    explicit = spec.front is not None
    return [
        "tritonserver",
        f"--model-repository={spec.repository_path}",
        f"--model-control-mode={'explicit' if explicit else 'none'}",
        f"--strict-readiness={'false' if explicit else 'true'}",
        "--exit-on-error=true",
        f"--http-port={HTTP_PORT}",
        f"--grpc-port={GRPC_PORT}",
        "--allow-metrics=true",
        f"--allow-gpu-metrics={'true' if spec.kind == 'gpu' else 'false'}",
        "--allow-cpu-metrics=true",
        f"--metrics-port={METRICS_PORT}",
        "--metrics-config=summary_latencies=true",
        # LLM engines: time to first response as a histogram (TTFT alerts)
        *(["--metrics-config=histogram_latencies=true"] if spec.engines else []),
        f"--log-verbose={spec.log_verbose}",
    ]


def _probe(path: str, failure_threshold: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": PROBE_PERIOD_SECONDS,
        "timeoutSeconds": 5,
        "failureThreshold": failure_threshold,
    }


def container(spec: TritonServiceSpec) -> dict[str, Any]:
    """The Triton container: ports, probes, resources, environment."""
    res = spec.resources
    requests: dict[str, Any] = {"cpu": res.cpu, "memory": res.memory}
    limits: dict[str, Any] = {"cpu": res.cpu_limit, "memory": res.memory_limit}
    if spec.kind == "gpu":
        requests["nvidia.com/gpu"] = res.gpus
        limits["nvidia.com/gpu"] = res.gpus
    startup_failures = max(1, -(-spec.startup_budget_seconds // PROBE_PERIOD_SECONDS))
    return {
        "name": "triton",
        "image": spec.image,
        "imagePullPolicy": "IfNotPresent",
        "command": triton_args(spec)[:1],
        "args": triton_args(spec)[1:],
        "ports": [
            {"name": "http", "containerPort": HTTP_PORT, "protocol": "TCP"},
            {"name": "grpc", "containerPort": GRPC_PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
        ],
        "env": _env(spec),
        "resources": {"requests": requests, "limits": limits},
        # The startup budget covers downloading and loading every model of the release.
        "startupProbe": _probe("/v2/health/ready", startup_failures),
        "readinessProbe": _probe("/v2/health/ready", 3),
        "livenessProbe": _probe("/v2/health/live", 6),
        # Triton writes no termination message: on an error exit the kubelet takes the log's
        # tail instead (Triton's reason, e.g. a model that failed to load), which `tdk endpoint
        # status` shows for a crash-looping pod (kubernetes.io/docs/tasks/debug/
        # debug-application/determine-reason-pod-failure/, checked 2026-11-27)
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "dshm", "mountPath": "/dev/shm"},
            *(
                [{"name": "models", "mountPath": spec.repository_path, "readOnly": True}]
                if spec.model_sync or spec.front
                else []
            ),
            *(
                [{"name": "weight-cache", "mountPath": WEIGHT_CACHE_MOUNT}]
                if spec.weight_cache_claim
                else []
            ),
            *([{"name": "engine-home", "mountPath": ENGINE_HOME}] if spec.engines else []),
            *access_mounts(spec.store_access),
        ],
    }


def _env(spec: TritonServiceSpec) -> list[dict[str, Any]]:
    """The stack's environment, plus the LLM engines' Hugging Face token and cache."""
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in sorted(spec.env.items())]
    if spec.engines:
        # NGC's triton-server user (uid 1000) has no home directory: the engines' caches
        # (Hugging Face, vLLM, torch, Triton's kernels) need a writable HOME and HF_HOME
        cache = WEIGHT_CACHE_MOUNT if spec.weight_cache_claim else ENGINE_HOME
        env.append({"name": "HOME", "value": ENGINE_HOME})
        env.append({"name": "HF_HOME", "value": f"{cache}/huggingface"})
    elif spec.weight_cache_claim:
        env.append({"name": "HF_HOME", "value": f"{WEIGHT_CACHE_MOUNT}/huggingface"})
    if spec.hf_token_secret:
        ref = {"name": spec.hf_token_secret, "key": "token", "optional": True}
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": ref}})
    return env + access_env(spec.store_access)


def _volumes(spec: TritonServiceSpec) -> list[dict[str, Any]]:
    volumes: list[dict[str, Any]] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": spec.shm_size}}
    ]
    if spec.front:
        volumes += mme.front_volumes(spec.front)
    elif spec.model_sync:
        volumes.append({"name": "models", "emptyDir": {}})
    if spec.weight_cache_claim:
        claim = {"claimName": spec.weight_cache_claim}
        volumes.append({"name": "weight-cache", "persistentVolumeClaim": claim})
    if spec.engines:  # HOME (and, without a claimed cache, the weights the engine downloads)
        volumes.append({"name": "engine-home", "emptyDir": {}})
    return volumes + access_volumes(spec.store_access)


def model_sync_container(spec: TritonServiceSpec, sync: ModelSync) -> dict[str, Any]:
    """Init container: the target's model sync copies the release's repository into the pod's
    volume, as the pod's own cloud identity (a projected token the cloud's CLI reads)."""
    return {
        "name": "sync-models",
        "image": sync.image,
        "imagePullPolicy": "IfNotPresent",
        "command": list(sync.command),
        "env": [
            {"name": "HOME", "value": "/tmp"},  # the CLI's cache; the pod runs as non-root
            *({"name": key, "value": value} for key, value in sorted(spec.env.items())),
            *access_env(spec.store_access),
        ],
        "resources": {
            "requests": {"cpu": "500m", "memory": "512Mi"},
            "limits": {"cpu": "2", "memory": "1Gi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "models", "mountPath": sync.path},
            *access_mounts(spec.store_access),
        ],
    }


def placement(spec: TritonServiceSpec) -> dict[str, Any]:
    """Where pods go: GPU pods onto the GPU pool; CPU pods preferably onto the GPU nodes' spare
    CPUs (tolerating the taint), spilling to ordinary nodes when those are full."""
    toleration = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": GPU_TAINT_EFFECT}
    if spec.kind == "gpu":
        return {"nodeSelector": {POOL_LABEL: GPU_POOL}, "tolerations": [toleration]}
    prefer_gpu_nodes = {
        "weight": 100,
        "preference": {
            "matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [GPU_POOL]}]
        },
    }
    return {
        "tolerations": [toleration],
        "affinity": {
            "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [prefer_gpu_nodes]}
        },
    }


def deployment(spec: TritonServiceSpec) -> Manifest:
    """Triton pods; a new release rolls one pod at a time, each ready once its models load.

    ``replicas`` is left out: KEDA's HPA owns it (a GitOps sync or ``pulumi up`` would
    otherwise reset it on every apply).
    """
    pod_spec: dict[str, Any] = {
        "serviceAccountName": spec.name,
        # the projected token a cloud identity exchanges (Workload Identity, IRSA); a workload
        # with none (a Secret reads its release) gets no API token it never uses
        "automountServiceAccountToken": bool(
            spec.identity.service_account or spec.identity.pod_labels
        ),
        "terminationGracePeriodSeconds": 60,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000},
        "containers": [
            container(spec),
            *([mme.front_container(spec, spec.front)] if spec.front else []),
        ],
        "volumes": _volumes(spec),
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": spec.selector},
            }
        ],
        **placement(spec),
    }
    if spec.model_sync:
        pod_spec["initContainers"] = [model_sync_container(spec, spec.model_sync)]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(spec),
        "spec": {
            "revisionHistoryLimit": 5,
            "selector": {"matchLabels": spec.selector},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
            "template": {
                "metadata": {"labels": {**spec.labels, **spec.identity.pod_labels}},
                "spec": pod_spec,
            },
        },
    }


def service(spec: TritonServiceSpec) -> Manifest:
    """HTTP and gRPC in front of the pods: cluster-internal unless a load balancer is asked for.
    In ``mme`` mode only the front's port, in the cluster: the Gateway is the way in
    (``k8s.gateway``) and Triton's own API stays inside the pod."""
    if spec.front:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _metadata(spec),
            "spec": {"type": "ClusterIP", "selector": spec.selector, "ports": [mme.SERVICE_PORT]},
        }
    service_type = "ClusterIP" if spec.exposure == "cluster-ip" else "LoadBalancer"
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(spec, annotations=dict(spec.service_annotations)),
        "spec": {
            "type": service_type,
            "selector": spec.selector,
            "ports": [
                {"name": "http", "port": HTTP_PORT, "targetPort": "http", "protocol": "TCP"},
                {"name": "grpc", "port": GRPC_PORT, "targetPort": "grpc", "protocol": "TCP"},
            ],
        },
    }


def pod_disruption_budget(spec: TritonServiceSpec) -> Manifest:
    """Node drains and upgrades take at most one Triton pod away at a time."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _metadata(spec),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": spec.selector}},
    }


def trigger_authentication(spec: TritonServiceSpec) -> Manifest:
    """KEDA authenticates to the managed Prometheus with its operator's cloud identity."""
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "TriggerAuthentication",
        "metadata": _metadata(spec),
        "spec": {"podIdentity": {"provider": spec.prometheus.provider}},
    }


def scaling_query(spec: TritonServiceSpec) -> str:
    """The exact PromQL KEDA evaluates for this workload (its first trigger's)."""
    return _triggers(spec)[0].query


def _triggers(spec: TritonServiceSpec) -> list[promql.EngineTrigger]:
    """``mme``: the fronts' pending requests and evictions per second. Else LLM engines' own
    metrics where the models run one that exports them, Triton's in-flight
    and pending series for one that does not, else Triton's queue/compute ratio
    (``metricType: Value``: the ratio is already per unit of compute, so the HPA asks for
    ``ceil(replicas * ratio / target)`` pods)."""
    if spec.front:  # mme: the fronts' pending requests and evictions per second
        return promql.multi_model_triggers(spec.namespace, spec.name)
    engine = promql.engine_triggers(spec.namespace, spec.name, spec.metric_engines)
    if engine:
        return engine
    if spec.engines:  # an engine without exported metrics: Triton's queue reads ~0 before it
        return promql.in_flight_triggers(spec.namespace, spec.name)
    query = promql.queue_compute_ratio(spec.namespace, spec.name)
    return [
        promql.EngineTrigger("queue-compute-ratio", query, "Value", spec.scaling.queue_ratio_target)
    ]


def scaled_object(spec: TritonServiceSpec) -> Manifest:
    """KEDA scales the Deployment on its triggers (see ``_triggers``); with several, the HPA
    takes the largest pod count any of them asks for."""
    source = {"serverAddress": spec.prometheus.server_address, **spec.prometheus.trigger_metadata}
    triggers = [
        {
            "type": "prometheus",
            "name": trigger.name,
            "metricType": trigger.metric_type,
            "metadata": source
            | {
                "query": trigger.query,
                "threshold": f"{trigger.threshold:g}",
                "ignoreNullValues": "true",
            },
            "authenticationRef": {"name": spec.name},
        }
        for trigger in _triggers(spec)
    ]
    scaling = spec.scaling
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": _metadata(spec),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": spec.name},
            "minReplicaCount": scaling.min_replicas,
            "maxReplicaCount": scaling.max_replicas,
            "pollingInterval": scaling.polling_seconds,
            "cooldownPeriod": scaling.cooldown_seconds,
            # cooldownPeriod only governs scaling to zero; between min and max the HPA's
            # scale-down stabilisation window is what keeps GPU pods from flapping.
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {
                        "scaleDown": {"stabilizationWindowSeconds": scaling.cooldown_seconds}
                    }
                }
            },
            "triggers": triggers,
        },
    }


def pod_monitoring(spec: TritonServiceSpec) -> Manifest:
    """Google Managed Prometheus scrapes Triton's metrics port (job label = workload name)."""
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": _metadata(spec),
        "spec": {
            "selector": {"matchLabels": spec.selector},
            "endpoints": [
                {"port": port, "interval": "15s", "path": "/metrics"} for port in spec.metrics_ports
            ],
        },
    }


def workload_manifests(spec: TritonServiceSpec) -> list[Manifest]:
    """Every manifest of the workload, in apply order (PodMonitoring where the spec asks)."""
    manifests = [
        service_account(spec),
        deployment(spec),
        service(spec),
        pod_disruption_budget(spec),
        trigger_authentication(spec),
        scaled_object(spec),
    ]
    if spec.pod_monitoring:
        manifests.append(pod_monitoring(spec))
    return manifests + gateway.gateway_manifests(spec)
