"""The ``k8s*`` stack keys every Kubernetes target shares, read into one frozen workload config."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from infra.config import ConfigReader, alert_email, check_capacity, qualify
from infra.facts import kubernetes as kf
from infra.facts import llm
from infra.facts.triton import default_kubernetes_triton_image
from infra.k8s.spec import (
    FrontSpec,
    ModelSync,
    PrometheusSource,
    Resources,
    Scaling,
    ServiceExposure,
    TritonServiceSpec,
    WorkloadIdentity,
    WorkloadKind,
)
from infra.k8s.store_access import StoreAccess
from packager.engines import engines_of
from tdk.errors import ConfigError


class ModelNeeds(Protocol):
    """What the workload reads of one model's ``packager.requirements.Requirements`` (a
    protocol, so this builder module never imports the packager's protobuf parsing)."""

    @property
    def model(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def gpus_per_replica(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def decoupled(self) -> bool: ...
    @property
    def engine_metrics(self) -> bool: ...


KINDS: tuple[str, ...] = ("gpu", "cpu")
EXPOSURES: tuple[str, ...] = ("cluster-ip", "internal-lb", "external-lb")
#: ``k8sModelMode``: every pod loads the whole release, or SageMaker's multi-model semantics
MODEL_MODES: tuple[str, ...] = ("all", "mme")
GIB = 1024**3
_DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class AlertThresholds:
    """When the dashboards' alerts fire."""

    latency_slo_ms: int
    error_rate_percent: float
    queue_ratio: float
    email: str | None
    #: models that stream (decoupled): Triton's request-latency summary spans a whole
    #: generation there, so the p99 latency rule leaves them out; TTFT covers them
    streamed_models: tuple[str, ...] = ()
    #: engines whose own metrics are exported (``packager.engines``): their alerts apply
    metric_engines: tuple[str, ...] = ()
    #: ``mme`` mode: the fronts' eviction, cold-load and failed-load alerts apply
    multi_model: bool = False
    #: p99 wait of a cold request (s) above which the cold-load alert fires
    cold_load_seconds: int = 60


#: the front's image in a rendered manifest when the stack builds it (``k8sFrontImage`` empty):
#: the stack output ``pulumi up`` fills with the pushed image's digest reference
BUILT_FRONT_IMAGE = "${frontImage}"
#: the built image's name in the cloud's repository
FRONT_IMAGE_NAME = "tdk-front"


@dataclass(frozen=True)
class MmeConfig:
    """``k8sModelMode: mme``: the front's image (None: the stack builds docker/front.Dockerfile
    and pushes it to the cloud's registry), its archive cache and its memory budget (bytes; 0
    until ``with_budget`` derives it from the pod)."""

    front_image: str | None
    cache_gib: int
    memory_budget_bytes: int


@dataclass(frozen=True)
class WorkloadConfig:
    """The Triton workload as the stack configures it (cloud-independent)."""

    namespace: str
    image: str
    kind: WorkloadKind
    gpus_per_pod: int
    cpu: str
    memory: str
    scaling: Scaling
    exposure: ServiceExposure
    startup_budget_seconds: int
    log_verbose: int
    alerts: AlertThresholds
    hf_token_secret: str | None = None
    weight_cache_claim: str | None = None
    #: memory-backed /dev/shm per pod; ``serve_models`` sizes it for LLM engines
    shm_size: str = "1Gi"
    #: the LLM engines the models run (``packager.engines`` backend names); ``serve_models``
    #: sets them
    engines: tuple[str, ...] = ()
    #: those whose own metrics every model exports: KEDA scales on them; an engine without
    #: them is scaled on Triton's own in-flight and pending series
    metric_engines: tuple[str, ...] = ()
    #: ``k8sModelMode: mme``; None: ``all`` (every pod loads the whole release)
    mme: MmeConfig | None = None


def read_mme(reader: ConfigReader) -> MmeConfig | None:
    """The ``mme`` keys when ``k8sModelMode`` is ``mme`` (None for ``all``); they are checked
    in either mode, so a bad value is named before the mode is switched."""
    mode = reader.choice("k8sModelMode", MODEL_MODES)
    image = reader.optional_string("k8sFrontImage")
    cache_gib = reader.integer("k8sMmeCacheGiB", minimum=1)
    budget_gib = reader.integer("k8sMmeMemoryBudgetGiB", minimum=0)
    if mode != "mme":
        return None
    if reader.optional_string("k8sWeightCacheClaim") is not None:
        raise ConfigError(
            f"{qualify('k8sWeightCacheClaim')} is set but {qualify('k8sModelMode')} is 'mme': "
            "the front's archive cache is mounted at /cache in that mode",
            hint=f'`pulumi config set {qualify("k8sWeightCacheClaim")} ""`',
        )
    return MmeConfig(front_image=image, cache_gib=cache_gib, memory_budget_bytes=budget_gib * GIB)


#: share of the pod's memory the loaded copies may use when ``k8sMmeMemoryBudgetGiB`` is 0: the
#: rest is Triton's own, each backend's context and the load in flight
BUDGET_SHARE = 0.9
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$")
_UNITS = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
          "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}  # fmt: skip


def quantity_bytes(key: str, value: str) -> int:
    """A Kubernetes memory quantity (``12Gi``, ``500M``, ``1073741824``) in bytes."""
    match = _QUANTITY.match(value)
    if match is None:
        raise ConfigError(
            f"{qualify(key)} is {value!r}, not a memory quantity Kubernetes accepts",
            hint=f"`pulumi config set {qualify(key)} 12Gi`",
        )
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def with_budget(config: WorkloadConfig, gpu_memory_gib: int | None) -> WorkloadConfig:
    """``config`` with its ``mme`` memory budget derived from the pod where the key is 0:
    :data:`BUDGET_SHARE` of its GPUs' memory (``gpu_memory_gib`` per GPU, the target's
    offer), or of ``k8sMemory`` for a CPU workload."""
    mme = config.mme
    if mme is None or mme.memory_budget_bytes:
        return config
    budget = pod_budget_bytes(config, gpu_memory_gib)
    return replace(config, mme=replace(mme, memory_budget_bytes=budget))


def pod_budget_bytes(config: WorkloadConfig, gpu_memory_gib: int | None) -> int:
    """What a pod's models may use: the ``mme`` budget where set, else :data:`BUDGET_SHARE` of
    its GPUs' memory, or of ``k8sMemory`` for a CPU workload."""
    if config.mme is not None and config.mme.memory_budget_bytes:
        return config.mme.memory_budget_bytes
    if config.kind == "gpu" and gpu_memory_gib:
        total = gpu_memory_gib * config.gpus_per_pod * GIB
    else:
        total = quantity_bytes("k8sMemory", config.memory)
    return int(total * BUDGET_SHARE)


def read_workload_config(reader: ConfigReader) -> WorkloadConfig:
    """Read and check every ``k8s*`` key (ConfigError naming the key on a bad value)."""
    kind = cast(WorkloadKind, reader.choice("k8sWorkloadKind", KINDS))
    low = reader.integer("k8sMinReplicas", minimum=1)
    high = reader.integer("k8sMaxReplicas", minimum=1)
    check_capacity("k8sMinReplicas", low, "k8sMaxReplicas", high)
    mme = read_mme(reader)
    scaling = Scaling(
        min_replicas=low,
        max_replicas=high,
        queue_ratio_target=reader.number("k8sQueueRatioTarget", minimum=0.01),
        polling_seconds=reader.integer("k8sPollingSeconds", minimum=5, maximum=600),
        cooldown_seconds=reader.integer("k8sCooldownSeconds", minimum=30),
    )
    return WorkloadConfig(
        namespace=dns_label(reader, "k8sNamespace"),
        image=reader.optional_string("k8sTritonImage") or default_kubernetes_triton_image(),
        kind=kind,
        gpus_per_pod=reader.integer("k8sGpusPerPod", minimum=1, maximum=8),
        cpu=reader.string("k8sCpu"),
        memory=reader.string("k8sMemory"),
        scaling=scaling,
        exposure=cast(ServiceExposure, reader.choice("k8sServiceExposure", EXPOSURES)),
        startup_budget_seconds=reader.integer("k8sStartupBudgetSeconds", minimum=60),
        log_verbose=reader.integer("k8sTritonLogVerbose", minimum=0, maximum=3),
        alerts=AlertThresholds(
            latency_slo_ms=reader.integer("k8sLatencySloMs", minimum=1),
            error_rate_percent=reader.number("k8sErrorRatePercent", minimum=0, maximum=100),
            queue_ratio=reader.number("k8sQueueRatioAlarm", minimum=0.01),
            email=alert_email(reader, "k8sAlertEmail"),
            multi_model=mme is not None,
            cold_load_seconds=reader.integer("k8sMmeColdLoadSeconds", minimum=1),
        ),
        hf_token_secret=reader.optional_string("k8sHfTokenSecret"),
        weight_cache_claim=reader.optional_string("k8sWeightCacheClaim"),
        mme=mme,
    )


#: a target's words for the nodes a pod of N GPUs needs (its node catalog's smallest fit)
NodeHint = Callable[[int], str]


def any_nodes(gpus: int) -> str:
    """What a target without a node catalog says of nodes with ``gpus`` GPUs."""
    return f"a node type with {gpus} GPUs"


def serve_models(
    config: WorkloadConfig, needs: Sequence[ModelNeeds], nodes: NodeHint = any_nodes
) -> WorkloadConfig:
    """``config`` fitted to the release's models (``nodes``: the target's words for nodes
    with N GPUs, in the hint of a pod too small): the image flavour that carries their LLM
    engine (same release), /dev/shm and the startup budget sized for an engine. A pod smaller
    than a model's tensor x pipeline parallel GPUs, a CPU workload for an engine, or two
    engines in one workload are ConfigErrors naming the key to change."""
    engines = sorted({n.engine for n in needs if n.engine})
    if not engines:
        return config
    image = llm.serving_image(config.image, engines, qualify("k8sTritonImage"))
    if config.kind != "gpu":
        raise ConfigError(
            f"{qualify('k8sWorkloadKind')} is {config.kind!r} but the release holds "
            f"{engines[0]} models, which need GPUs",
            hint=f"`pulumi config set {qualify('k8sWorkloadKind')} gpu`",
        )
    widest = max(needs, key=lambda n: n.gpus_per_replica)
    if widest.gpus_per_replica > config.gpus_per_pod:
        raise ConfigError(
            f"{widest.model} needs {widest.gpus_per_replica} GPUs per replica (tensor x pipeline "
            f"parallel in {widest.source}) but {qualify('k8sGpusPerPod')} is "
            f"{config.gpus_per_pod}",
            hint=f"`pulumi config set {qualify('k8sGpusPerPod')} {widest.gpus_per_replica}` and "
            f"nodes with that many GPUs ({nodes(widest.gpus_per_replica)})",
        )
    shm = max(llm.SHM_GIB_MIN, llm.SHM_GIB_PER_GPU * config.gpus_per_pod)
    flavour = engines_of(sorted(llm.FLAVOUR_BACKENDS[llm.FLAVOURS[engines[0]]]))
    metered = flavour if all(n.engine_metrics for n in needs if n.engine) else ()
    streamed = tuple(sorted(n.model for n in needs if n.decoupled))
    return replace(
        config,
        image=image,
        shm_size=f"{shm}Gi",
        engines=flavour,
        metric_engines=metered,
        alerts=replace(config.alerts, streamed_models=streamed, metric_engines=metered),
        startup_budget_seconds=max(config.startup_budget_seconds, llm.LLM_STARTUP_BUDGET_SECONDS),
    )


def workload_spec(
    config: WorkloadConfig,
    *,
    name: str,
    load_balancers: Mapping[str, Mapping[str, str]],
    model_repository: str,
    release_url: str,
    prometheus: PrometheusSource,
    identity: WorkloadIdentity,
    builder: WorkloadIdentity,
    env: Mapping[str, str],
    pod_monitoring: bool,
    model_sync: ModelSync | None = None,
    store_access: StoreAccess | None = None,
) -> TritonServiceSpec:
    """The plain spec the manifests are built from (Pulumi and ``tdk render`` alike). In
    ``mme`` mode the front loads copies from ``release_url`` and nothing is synced first.
    ``identity`` is what the pods run as (it reads the release), ``builder`` what ``tdk
    build``'s Job runs as (the only writer of its engine cache); ``store_access`` the Secret a
    target without a cloud identity reads the release with (``infra.k8s.store_access``)."""
    gpus = config.gpus_per_pod if config.kind == "gpu" else 0
    front = None
    if config.mme is not None:
        image = config.mme.front_image
        front = FrontSpec(
            image=BUILT_FRONT_IMAGE if image is None else image,
            release_url=release_url,
            cache_bytes=config.mme.cache_gib * GIB,
            memory_budget_bytes=config.mme.memory_budget_bytes,
        )
    return TritonServiceSpec(
        name=name,
        namespace=config.namespace,
        service_annotations=dict(load_balancers.get(config.exposure, {})),
        kind=config.kind,
        image=config.image,
        model_repository=model_repository,
        resources=Resources(
            cpu=config.cpu,
            memory=config.memory,
            cpu_limit=config.cpu,
            memory_limit=config.memory,
            gpus=gpus,
        ),
        scaling=config.scaling,
        prometheus=prometheus,
        exposure=config.exposure,
        startup_budget_seconds=config.startup_budget_seconds,
        pod_monitoring=pod_monitoring,
        identity=identity,
        builder=builder,
        env=dict(env),
        log_verbose=config.log_verbose,
        model_sync=None if front else model_sync,
        front=front,
        shm_size=config.shm_size,
        engines=config.engines,
        metric_engines=config.metric_engines,
        hf_token_secret=config.hf_token_secret,
        weight_cache_claim=config.weight_cache_claim,
        store_access=store_access,
    )


def dns_label(reader: ConfigReader, key: str) -> str:
    """A Kubernetes namespace-style name (RFC 1123 label)."""
    value = reader.string(key)
    if not _DNS_LABEL.match(value):
        raise ConfigError(
            f"{qualify(key)} is {value!r}: use 1-63 of a-z 0-9 and -, starting and ending "
            "with a letter or digit",
            hint=f"`pulumi config set {qualify(key)} triton`",
        )
    return value


def with_front_image(spec: TritonServiceSpec, image: Any) -> TritonServiceSpec:
    """``spec`` with its front running ``image`` (the stack's built image: a Pulumi output)."""
    if spec.front is None:
        return spec
    return replace(spec, front=replace(spec.front, image=image))


def read_keda_chart(reader: ConfigReader, kubernetes_version: str) -> str:
    """``k8sKedaChartVersion`` for a cluster of ``kubernetes_version``: the pin, refused when
    KEDA's table says it does not support that minor, else (empty) the table's newest for it."""
    pinned = reader.optional_string("k8sKedaChartVersion")
    if pinned is None:
        return kf.keda_for(kubernetes_version).version
    row = kf.keda_pin(pinned)
    if row is None or not row.supports(kf.minor(kubernetes_version)):
        key = qualify("k8sKedaChartVersion")
        raise ConfigError(
            f"{key} {pinned} does not support Kubernetes {kubernetes_version} "
            f"({kf.KEDA_SOURCE.url}, checked {kf.KEDA_SOURCE.checked})",
            hint=f"`pulumi config set {key} {kf.keda_for(kubernetes_version).version}` or "
            "remove the pin",
        )
    return pinned
