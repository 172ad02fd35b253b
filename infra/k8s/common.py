"""What every Kubernetes target shares: a release is required, rendering, the TensorRT
engine-build Job, the invoke command."""

from __future__ import annotations

import abc
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

from infra.config import ConfigReader, ReleaseLocation, StackConfig, qualify
from infra.k8s import manifests
from infra.k8s.build_job import BuildJobSpec, StoreCopy, build_job, build_service_account
from infra.k8s.config import (
    ModelNeeds,
    WorkloadConfig,
    any_nodes,
    pod_budget_bytes,
    serve_models,
    with_budget,
)
from infra.k8s.gateway import (
    GATEWAY_CHART_VERSION,
    GATEWAY_KUBERNETES_MINORS,
    GATEWAY_MATRIX,
)
from infra.k8s.spec import TritonServiceSpec
from infra.targets.base import (
    EXAMPLE_TARGET_MODEL,
    BuildPort,
    EngineJob,
    Manifest,
    OutputValue,
    RenderPort,
    Target,
)
from infra.values.offer import ModelLoading, TargetSpec
from tdk.errors import ConfigError


class WorkloadStack(Protocol):
    """A Kubernetes target's config: it holds the Triton workload's own config."""

    @property
    def workload(self) -> WorkloadConfig: ...


ConfigT = TypeVar("ConfigT", bound=WorkloadStack)


class KubernetesTarget(Target[ConfigT]):
    """A target that runs the shared Triton workload on a cluster: it renders manifests."""

    def __init__(self) -> None:
        self.render = _Manifests(self)
        self.build = _EngineJob(self)

    @abc.abstractmethod
    def workload_spec(self, config: ConfigT, output: OutputValue) -> TritonServiceSpec:
        """The Triton workload of this stack (deployment-only values come from ``output``)."""

    def read_config(self, reader: ConfigReader, common: StackConfig) -> ConfigT:
        """The base's checks and keys, then an ``mme`` memory budget of 0 derived from what a
        pod offers (``with_budget``)."""
        config = super().read_config(reader, common)
        if config.workload.mme is not None:
            check_gateway_supports(self.cluster_minors(config))
        gpu = self.pod_offer(config).gpu
        workload = with_budget(config.workload, gpu.memory_gib if gpu else None)
        return replace(config, workload=workload)  # type: ignore[type-var]

    @abc.abstractmethod
    def cluster_minors(self, config: ConfigT) -> ClusterMinors:
        """The Kubernetes minors the stack's cluster may run, and the key that sets them."""

    @abc.abstractmethod
    def pod_offer(self, config: ConfigT) -> TargetSpec:
        """What one Triton pod of the stack offers a model (its node's GPU, the pod's GPUs,
        the workload's image)."""

    def offer(self, config: ConfigT) -> TargetSpec:
        """One pod, with how it holds the release (``k8sModelMode``)."""
        spec = self.pod_offer(config)
        return replace(spec, loading=model_loading(config.workload, spec))

    def fit_models(self, config: ConfigT, needs: Sequence[ModelNeeds]) -> ConfigT:
        """The stack's config with its workload fitted to the models (``serve_models``)."""
        fitted = serve_models(config.workload, needs, self.nodes_with)
        return replace(config, workload=fitted)  # type: ignore[type-var]

    def nodes_with(self, gpus: int) -> str:
        """The target's words for nodes with ``gpus`` GPUs (a stack key and its catalog's
        smallest fit), in the hint when a model needs more GPUs than a pod has."""
        return any_nodes(gpus)

    def model_repositories(self, reader: ConfigReader) -> tuple[Path, ...]:
        """The ``k8sModels`` repositories the stack's workload is fitted to."""
        from infra.k8s.models import stack_repositories

        return stack_repositories(reader)

    @abc.abstractmethod
    def store_copy(self, config: ConfigT, entry_url: str) -> StoreCopy:
        """How a pod with the build's identity fetches ``<entry_url>input/`` and uploads the
        engine and its record to ``entry_url`` (the cloud's CLI image and commands)."""

    def cluster_manifests(self, config: ConfigT) -> list[Manifest]:
        """Cluster-scoped objects the target adds to the workload's (none by default)."""
        del config
        return []

    def written_forms(self, key: str, value: str) -> tuple[str, ...]:
        """How a stack value appears in the target's manifests (``RenderPort.written_forms``):
        as given, unless the target writes it in parts."""
        del key
        return (value,)


class _Manifests(RenderPort[ConfigT]):
    """A Kubernetes target's render port: its namespace, the Triton workload and its
    cluster-scoped objects."""

    def __init__(self, target: KubernetesTarget[ConfigT]) -> None:
        self.target = target

    def manifests(self, config: ConfigT, output: OutputValue) -> list[Manifest]:
        spec = self.target.workload_spec(config, output)
        return [
            manifests.namespace(spec),
            *manifests.workload_manifests(spec),
            build_service_account(spec),
            *self.target.cluster_manifests(config),
        ]

    def written_forms(self, key: str, value: str) -> tuple[str, ...]:
        return self.target.written_forms(key, value)


class _EngineJob(BuildPort[ConfigT]):
    """A Kubernetes target's build port: a Job on the GPU pool, placed as the stack's Triton
    pods, as the workload's build ServiceAccount (``k8s.build_job``)."""

    def __init__(self, target: KubernetesTarget[ConfigT]) -> None:
        self.target = target

    def engine_job(self, config: ConfigT, output: OutputValue, job: EngineJob) -> list[Manifest]:
        spec = BuildJobSpec(
            name=job.name,
            workload=self.target.workload_spec(config, output),
            tensorrt_image=job.tensorrt_image,
            copy=self.target.store_copy(config, job.entry_url),
            deadline_seconds=job.deadline_seconds,
        )
        return [build_job(spec)]


@dataclass(frozen=True)
class ClusterMinors:
    """The Kubernetes minors a cluster may run (1.<low> to 1.<high>: a release channel
    upgrades it up to its newest) and the stack key and value that set them."""

    low: int
    high: int
    setting: str


def check_gateway_supports(cluster: ClusterMinors) -> None:
    """``mme`` mode installs Envoy Gateway: a cluster beyond its chart's Kubernetes range is a
    ConfigError naming the key (``k8s.gateway``: the compatibility matrix, its source)."""
    low, high = GATEWAY_KUBERNETES_MINORS
    if low <= cluster.low and cluster.high <= high:
        return
    raise ConfigError(
        f"{qualify('k8sModelMode')} is 'mme', which installs Envoy Gateway "
        f"{GATEWAY_CHART_VERSION} (Kubernetes 1.{low} to 1.{high}), but {cluster.setting} "
        f"runs Kubernetes 1.{cluster.low} to 1.{cluster.high} ({GATEWAY_MATRIX})",
        hint=f"set a Kubernetes version from 1.{low} to 1.{high} in {cluster.setting.split()[0]}"
        f", or `pulumi config set {qualify('k8sModelMode')} all`",
    )


def model_loading(workload: WorkloadConfig, spec: TargetSpec) -> ModelLoading:
    """``k8sModelMode`` as the feasibility path reads it: every model at start (``all``), or
    copy by copy within the front's budget (``mme``)."""
    budget = pod_budget_bytes(workload, spec.gpu.memory_gib if spec.gpu else None)
    key = qualify("k8sModelMode")
    return ModelLoading(
        on_demand=workload.mme is not None,
        budget_bytes=budget,
        mode=f"{key} {'mme' if workload.mme else 'all'}",
        switch=f"`pulumi config set {key} mme`",
    )


def require_release(common: StackConfig, scheme: str) -> ReleaseLocation:
    """Kubernetes targets serve an existing release: Triton starts from its repository/ tree."""
    if common.release is None:
        raise ConfigError(
            f"{qualify('releaseUrl')} is empty; the {common.target} target serves an existing "
            "release (Triton loads <releaseUrl>/repository at start)",
            hint=f"run `tdk package --release {scheme}://<bucket>/<prefix>` and set "
            f"`pulumi config set {qualify('releaseUrl')} {scheme}://<bucket>/<prefix>`",
        )
    return common.release


def csv(reader: ConfigReader, key: str) -> tuple[str, ...]:
    """A comma-separated list key ("" is the empty list)."""
    raw = reader.optional_string(key) or ""
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def port_forward_command(spec: TritonServiceSpec) -> str:
    """``kubectl port-forward`` to the workload's serving port (Triton's HTTP, or the front's
    in ``mme`` mode) on 127.0.0.1."""
    port = spec.serving_port
    service = f"svc/{spec.name}"
    return shlex.join(["kubectl", "-n", spec.namespace, "port-forward", service, f"{port}:{port}"])


def invoke_command(target: str, spec: TritonServiceSpec, release_url: str) -> str:
    """A complete, pasteable command: port-forward in the background, wait until Triton
    answers ready through it, then ``tdk invoke --target <target>`` (the stack's own target,
    never a deprecated spelling).

    The model is the sample release's text model (``EXAMPLE_TARGET_MODEL``, as on SageMaker):
    stack outputs are computed at ``pulumi up`` without reading the store, so the release's
    own manifest is not consulted; ``tdk invoke`` checks the name against it.
    """
    url = f"http://127.0.0.1:{spec.serving_port}"
    invoke = shlex.join(
        [
            "tdk", "invoke", "--target", target, "--url", url, "--release", release_url,
            "--target-model", EXAMPLE_TARGET_MODEL, "--text", "a short test sentence",
        ]
    )  # fmt: skip
    ready = f"until curl -sf {url}{spec.ready_path}; do sleep 1; done"
    return f"{port_forward_command(spec)} >/dev/null & {ready}; {invoke}"
