"""The onprem target's deploy contract: the shared Triton workload on a cluster that exists,
with KEDA and (in ``mme`` mode) Envoy Gateway installed from their pinned charts; no node pool,
no cloud identity, no registry, no budget (the cluster's owner pays for its nodes)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, ClassVar

from infra.config import ConfigReader, StackConfig, parse_release_url, qualify
from infra.facts import kubernetes as kf
from infra.facts.findings import Finding
from infra.k8s.build_job import StoreCopy
from infra.k8s.common import ClusterMinors, KubernetesTarget
from infra.k8s.config import read_keda_chart, read_workload_config
from infra.k8s.models import fitted_workload
from infra.k8s.spec import GPU_POOL, POOL_LABEL, TritonServiceSpec
from infra.targets.base import DoctorPort, Manifest, OutputValue
from infra.targets.capabilities import Refused
from infra.targets.checks import pod_spec
from infra.targets.onprem import builders as b
from infra.targets.onprem.config import (
    OnpremConfig,
    own_manifests,
    read_gpu,
    read_internal_lb,
    read_kubernetes_version,
    read_pairs,
    read_prometheus_url,
    read_release,
    read_secret,
    triton_spec,
)
from infra.values.names import K8S_SERVICE, derived
from infra.values.offer import TargetSpec, image_facts
from tdk.errors import ConfigError, UsageError

#: the most GPUs a node may state (``onpremGpusPerNode``): 8 or 16 per server
MAX_GPUS_PER_NODE = 16
#: why ``tdk build --stack`` cannot run on an onprem stack
NO_BUILD = (
    "its build Job writes TensorRT engines into the release's engine cache as a writer "
    "identity of its own, and an existing cluster's stack has only the read Secret"
)


class OnpremDoctor(DoctorPort[OnpremConfig]):
    """What ``tdk doctor`` checks of an onprem stack: KEDA's chart against the stated
    Kubernetes version, the Triton image; with ``--online``, the version against the cluster's
    own (``kubectl version``)."""

    def facts(self, config: OnpremConfig, today: dt.date) -> list[Finding]:
        from infra.targets.onprem import doctor

        return doctor.findings(config, today)

    def online_drift(self, config: OnpremConfig) -> tuple[str, list[str]] | None:
        from infra.targets.onprem import doctor

        return doctor.API, doctor.version_drift(config)


class OnpremTarget(KubernetesTarget[OnpremConfig]):
    """Triton on an existing cluster: KEDA (and Envoy Gateway) charts, the workload, its
    PodMonitor, alert rules and dashboard."""

    derived_names = tuple(derived(K8S_SERVICE, False, "{name}"))
    release_schemes: ClassVar[tuple[str, ...]] = b.RELEASE_SCHEMES
    doctor = OnpremDoctor()

    def __init__(self) -> None:
        super().__init__()
        self.build = Refused(NO_BUILD)

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> OnpremConfig:
        release = read_release(common)
        version = read_kubernetes_version(reader)
        gpu = read_gpu(reader)
        gpus = reader.integer("onpremGpusPerNode", minimum=1, maximum=MAX_GPUS_PER_NODE)
        workload = fitted_workload(reader, read_workload_config(reader), self.nodes_with)
        if workload.kind == "gpu" and workload.gpus_per_pod > gpus:
            raise ConfigError(
                f"{qualify('k8sGpusPerPod')} ({workload.gpus_per_pod}) exceeds the {gpus} "
                f"GPU(s) of a node ({qualify('onpremGpusPerNode')}): no node could run a pod",
                hint=f"lower {qualify('k8sGpusPerPod')}, or state the nodes' GPUs in "
                f"{qualify('onpremGpusPerNode')}",
            )
        if workload.mme is not None and workload.mme.front_image is None:
            key = qualify("k8sFrontImage")
            raise ConfigError(
                f"{key} is empty but {qualify('k8sModelMode')} is 'mme': the onprem target has "
                "no registry to build the front's image into",
                hint="build docker/front.Dockerfile, push it where the cluster pulls from, and "
                f"`pulumi config set {key} <registry>/tdk-front:<tag>`",
            )
        return OnpremConfig(
            common=common,
            release=release,
            kubeconfig=reader.optional_string("onpremKubeconfig"),
            context=reader.optional_string("onpremContext"),
            kubernetes_version=version,
            keda_version=read_keda_chart(reader, version),
            gpu=gpu,
            gpus_per_node=gpus,
            release_secret=read_secret(reader, release),
            s3_endpoint=b.s3_endpoint(reader.optional_string("onpremS3EndpointUrl")),
            s3_region=reader.string("onpremS3Region"),
            prometheus_url=read_prometheus_url(reader),
            prometheus_operator=reader.boolean("onpremPrometheusOperator"),
            internal_lb_annotations=read_internal_lb(reader),
            prometheus_labels=read_pairs(reader, "onpremPrometheusLabels", "release=monitoring"),
            grafana_dashboard=reader.boolean("onpremGrafanaDashboard"),
            workload=workload,
        )

    def nodes_with(self, gpus: int) -> str:
        """Nodes the stack states (``onpremGpusPerNode``, at most :data:`MAX_GPUS_PER_NODE`)."""
        key = qualify("onpremGpusPerNode")
        if gpus > MAX_GPUS_PER_NODE:
            return f"no node of the {MAX_GPUS_PER_NODE} GPUs {key} allows at most has {gpus}"
        return f"nodes with {gpus} GPUs, labelled {POOL_LABEL}={GPU_POOL}, stated in {key}"

    def cluster_minors(self, config: OnpremConfig) -> ClusterMinors:
        """The cluster's one minor, as the stack states it (``onpremKubernetesVersion``)."""
        minor = kf.minor(config.kubernetes_version)
        setting = f"{qualify('onpremKubernetesVersion')} {config.kubernetes_version}"
        return ClusterMinors(minor, minor, setting)

    def pod_offer(self, config: OnpremConfig) -> TargetSpec:
        """One Triton pod on a GPU node of the stated kind (no node catalog: the stack says
        the GPU and how many a node has)."""
        workload = config.workload
        node = TargetSpec(
            config.common.target, f"{config.gpus_per_node}x {config.gpu.kind} node", config.gpu, 0,
            image_facts(workload.image), mme=False, gpus=config.gpus_per_node,
            image_name=workload.image,
        )  # fmt: skip
        return pod_spec(config.common.target, node, workload.gpus_per_pod, workload.kind == "cpu")

    def declare(self, config: OnpremConfig) -> Mapping[str, Any]:
        from infra.targets.onprem.stack import declare_onprem

        return declare_onprem(config)

    def store_copy(self, config: OnpremConfig, entry_url: str) -> StoreCopy:
        """Never reached: the build port is refused (``NO_BUILD``)."""
        del entry_url
        raise UsageError(f"the {config.common.target} target cannot build engines: {NO_BUILD}")

    def workload_spec(self, config: OnpremConfig, output: OutputValue) -> TritonServiceSpec:
        del output  # every value is the stack's own: nothing only a deployment knows
        return triton_spec(config)

    def written_forms(self, key: str, value: str) -> tuple[str, ...]:
        """The release URL is written as Triton names it (an S3 endpoint before the bucket,
        ``as://`` for Azure): its bucket (Azure: account) is what appears whole."""
        if key != qualify("releaseUrl"):
            return (value,)
        try:
            release = parse_release_url(key, value, self.release_schemes)
        except ConfigError:
            return (value,)
        return (value, release.bucket)

    def cluster_manifests(self, config: OnpremConfig) -> list[Manifest]:
        """The PodMonitor, the alerts' PrometheusRule, the Grafana dashboard (``own_manifests``)."""
        return own_manifests(config)


TARGET = OnpremTarget()
