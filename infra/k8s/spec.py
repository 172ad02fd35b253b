"""Plain data describing one Triton workload on Kubernetes (both clouds and `tdk render`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from infra.k8s.store_access import StoreAccess

WorkloadKind = Literal["gpu", "cpu"]
ServiceExposure = Literal["cluster-ip", "internal-lb", "external-lb"]

#: Label every GPU node pool of the kit carries (GKE node pool and EKS node group alike).
POOL_LABEL = "triton-deploy-kit/pool"
GPU_POOL = "gpu"
#: Taint on every GPU node: only pods that tolerate it (and ask for GPUs) land there.
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "present"
GPU_TAINT_EFFECT = "NoSchedule"
#: The node label that satisfies the NVIDIA device plugin chart's default required node
#: affinity without Node Feature Discovery (its third term: "a GPU deployment to be forced by
#: setting the following label to "true""; NVIDIA/k8s-device-plugin v0.20.0
#: deployments/helm/nvidia-device-plugin/values.yaml lines 64-85, read 2026-12-07). A GPU pool
#: where the kit installs that chart carries it, or the plugin's DaemonSet never runs there.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"

#: Worst case for a node to join a GPU pool scaled to zero: the VM boots, the NVIDIA driver
#: installs, the ~10 GB Triton image is pulled. The pod's own startup budget comes on top.
NODE_STARTUP_BUDGET_SECONDS = 900

HTTP_PORT = 8000
GRPC_PORT = 8001
METRICS_PORT = 8002
#: the kit's front in ``mme`` mode: SageMaker's contract, Triton's v2 by name, /ping, /metrics
FRONT_PORT = 8080
#: where the front extracts the archives it fetched (an emptyDir with a size limit, ``mme``)
FRONT_CACHE_PATH = "/cache"
#: HF_HOME in the pod when a weight cache is mounted (infra/facts/llm.py says why)
WEIGHT_CACHE_MOUNT = "/cache"
#: HOME of an LLM engine pod (an emptyDir): NGC's ``triton-server`` user (uid 1000) has no
#: home directory, so a Hugging Face download fails with "Permission denied:
#: '/home/triton-server'" (triton-inference-server/server#7015; the user's creation in server
#: ``build.py`` at v2.69.0 as issue 38 cites it, not re-read here, 2026-11-27)
ENGINE_HOME = "/engine-home"


def triton_selector(name: str) -> dict[str, str]:
    """The labels that select workload ``name``'s Triton pods (its Deployment's selector)."""
    return {"app.kubernetes.io/name": "triton", "app.kubernetes.io/instance": name}


@dataclass(frozen=True)
class Scaling:
    """KEDA bounds and the queue-to-compute ratio that triggers a scale-out."""

    min_replicas: int
    max_replicas: int
    queue_ratio_target: float  # queue time / compute time the workload should hold
    polling_seconds: int
    cooldown_seconds: int


@dataclass(frozen=True)
class PrometheusSource:
    """Where KEDA reads Triton's metrics and how it authenticates: the target's metrics query
    auth. ``provider`` is KEDA's pod-identity provider for the operator's cloud identity and
    ``trigger_metadata`` what each Prometheus trigger adds for it (a region to sign for); the
    target gives both (``infra/targets/<target>/builders.py``), this layer only places them.
    """

    server_address: str
    provider: str
    trigger_metadata: Mapping[str, str] = field(default_factory=dict)


#: where a synced copy of the release lives in the pod (an emptyDir), what Triton loads
MODEL_SYNC_PATH = "/models"


@dataclass(frozen=True)
class ModelSync:
    """Copy the release's repository into the pod before Triton starts (an init container),
    instead of Triton reading the object store itself: the target's model sync, its cloud's
    CLI image and the command that copies ``<release>/repository`` into ``path`` as the pod's
    own identity (``infra/targets/<target>/builders.py`` says why its cloud needs one)."""

    image: str
    command: tuple[str, ...]
    path: str = MODEL_SYNC_PATH


@dataclass(frozen=True)
class FrontSpec:
    """``mme`` mode: the kit's front beside Triton in every pod (``tdk front serve``), which
    loads a copy on its first request from the release, as the pod's own cloud identity, and
    evicts the least recently used idle one beyond ``memory_budget_bytes``. ``image`` may be
    a Pulumi output (the digest reference of the image the stack built)."""

    image: Any
    release_url: str
    cache_bytes: int
    memory_budget_bytes: int


@dataclass(frozen=True)
class WorkloadIdentity:
    """The cloud identity a workload's pods run as, stated as what its pods need: the target's
    pod identity (``infra/targets/<target>/builders.py: workload_identity``), which this layer
    only places.

    ``service_account`` are the ServiceAccount's annotations that bind it to the cloud identity
    (values may be Pulumi outputs); ``pod_labels`` the labels every pod it runs carries (the
    Deployment's and an engine build Job's pod template, never the selector), for an identity
    webhook that acts only on labelled pods.
    """

    service_account: Mapping[str, Any] = field(default_factory=dict)
    pod_labels: Mapping[str, str] = field(default_factory=dict)


def build_account_name(name: str) -> str:
    """The Kubernetes ServiceAccount ``tdk build``'s Job of workload ``name`` runs as: bound to
    the target's engine-builder identity, the only one that may write the release's engine cache
    (the workload's own identity only reads it, so a serving pod cannot plant an engine)."""
    return f"{name}-build"


@dataclass(frozen=True)
class Resources:
    """Container requests and limits (requests == limits for GPU pods: Guaranteed QoS)."""

    cpu: str
    memory: str
    cpu_limit: str
    memory_limit: str
    gpus: int  # nvidia.com/gpu per pod; 0 for kind "cpu"


@dataclass(frozen=True)
class TritonServiceSpec:
    """Everything the manifests of one Triton workload are computed from."""

    name: str
    namespace: str
    kind: WorkloadKind
    image: str
    model_repository: str  # <release>/repository, in the target's store
    resources: Resources
    scaling: Scaling
    prometheus: PrometheusSource
    exposure: ServiceExposure
    startup_budget_seconds: int
    #: a Google Managed Prometheus ``PodMonitoring`` scrapes the metrics port (GKE); where
    #: False, the cloud scrapes without an in-cluster object (the AMP managed scraper on EKS)
    pod_monitoring: bool
    #: the cloud identity its pods run as (the target's pod identity): reads the release
    identity: WorkloadIdentity = field(default_factory=WorkloadIdentity)
    #: the cloud identity ``tdk build``'s Job runs as (``build_account_name``): the only one
    #: that writes the release's engine cache
    builder: WorkloadIdentity = field(default_factory=WorkloadIdentity)
    env: Mapping[str, str] = field(default_factory=dict)
    #: the Service's annotations for its ``exposure`` (the cloud's load-balancer kind; the
    #: target gives them)
    service_annotations: Mapping[str, str] = field(default_factory=dict)
    log_verbose: int = 0
    model_sync: ModelSync | None = None
    #: LLM engines the release's models run (``packager.engines`` names, from their backends):
    #: KEDA scales on the engines' own metrics instead of Triton's queue/compute ratio
    engines: tuple[str, ...] = ()
    #: the engines whose own metrics are exported (KEDA scales on those; an engine without
    #: them on Triton's in-flight and pending series)
    metric_engines: tuple[str, ...] = ()
    #: size of the memory-backed /dev/shm (LLM engines exchange tensors across processes there)
    shm_size: str = "1Gi"
    #: a Secret (key ``token``) whose value becomes HF_TOKEN, for gated Hugging Face weights;
    #: optional in the pod, so a missing Secret does not stop ungated models
    hf_token_secret: str | None = None
    #: a PersistentVolumeClaim mounted as the engines' download cache (HF_HOME), so a new pod
    #: does not download the weights again
    weight_cache_claim: str | None = None
    #: ``mme`` mode (``k8sModelMode``): Triton in explicit model-control mode with an empty
    #: repository and the front beside it; None: every pod loads the whole release (``all``)
    front: FrontSpec | None = None
    #: the release store's credentials from a Secret the user made, for a target whose pods
    #: have no cloud identity (``infra.k8s.store_access``); None: the pods' identity reads it
    store_access: StoreAccess | None = None

    @property
    def repository_path(self) -> str:
        """What Triton's ``--model-repository`` names: the front's directory (``mme``), the
        synced copy, or the store URL."""
        if self.front is not None:
            return MODEL_SYNC_PATH
        return self.model_sync.path if self.model_sync else self.model_repository

    @property
    def build_service_account(self) -> str:
        """The ServiceAccount of ``tdk build``'s Job (``build_account_name``)."""
        return build_account_name(self.name)

    @property
    def serving_port(self) -> int:
        """The Service port clients call: Triton's HTTP, or the front's in ``mme`` mode."""
        return FRONT_PORT if self.front else HTTP_PORT

    @property
    def ready_path(self) -> str:
        """What answers 200 once a pod serves: Triton's ready endpoint, or the front's
        ``/ping`` in ``mme`` mode (Triton and the front up; no model need be loaded)."""
        return "/ping" if self.front else "/v2/health/ready"

    @property
    def metrics_ports(self) -> tuple[str, ...]:
        """The pod's ports a scraper reads ``/metrics`` from: Triton's, and the front's (its
        ``tdk_*`` series: SageMaker's multi-model metrics) in ``mme`` mode."""
        return ("metrics", "front") if self.front else ("metrics",)

    @property
    def rollout_timeout_seconds(self) -> int:
        """How long ``pulumi up`` waits for the Deployment to be Ready (pulumi-kubernetes
        gives up after 10 minutes by default): a new node, then the pod's startup budget."""
        return NODE_STARTUP_BUDGET_SECONDS + self.startup_budget_seconds

    @property
    def labels(self) -> dict[str, str]:
        return {
            "app.kubernetes.io/name": "triton",
            "app.kubernetes.io/instance": self.name,
            "app.kubernetes.io/component": self.kind,
            "app.kubernetes.io/managed-by": "triton-deploy-kit",
        }

    @property
    def selector(self) -> dict[str, str]:
        return triton_selector(self.name)
