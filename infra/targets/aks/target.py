"""The ``aks`` target: AKS with a system pool and a tainted GPU pool that scales to zero,
running the shared Triton workload (the release synced from Blob Storage with workload
identity), KEDA on Azure Monitor managed Prometheus, the shared alert rules, a budget."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from infra.clouds.azure import catalog
from infra.clouds.azure.offer import vm_size_spec
from infra.config import (
    ConfigReader,
    StackConfig,
    check_capacity,
    parse_release_url,
    qualify,
)
from infra.facts import kubernetes as kf
from infra.facts.findings import Finding
from infra.k8s.build_job import StoreCopy
from infra.k8s.common import ClusterMinors, KubernetesTarget, require_release
from infra.k8s.config import read_keda_chart, read_workload_config
from infra.k8s.models import fitted_workload
from infra.k8s.spec import TritonServiceSpec
from infra.targets.aks import builders as b
from infra.targets.aks.cloud_names import DERIVED
from infra.targets.aks.config import (
    AksConfig,
    read_gpu_size,
    read_kubernetes_version,
    read_location,
    read_release_group,
    triton_spec,
)
from infra.targets.base import DoctorPort, Manifest, OutputValue, Refusal
from infra.targets.checks import pod_spec
from infra.values.guardrails import read_api_cidrs, read_budget
from infra.values.offer import TargetSpec
from tdk.errors import ConfigError


class AksDoctor(DoctorPort[AksConfig]):
    """What ``tdk doctor`` checks of an AKS stack."""

    def facts(self, config: AksConfig, today: dt.date) -> list[Finding]:
        """The AKS calendar, the charts for the cluster's minor, the Triton image."""
        from infra.targets.aks import doctor

        return doctor.findings(config, today)

    def online_drift(self, config: AksConfig) -> tuple[str, list[str]] | None:
        """The calendar against ``az aks get-versions`` for the stack's region."""
        from infra.targets.aks import doctor

        return doctor.API, doctor.version_drift(config.location)


class AksTarget(KubernetesTarget[AksConfig]):
    """AKS: resource group, cluster, GPU pool, workload identity, KEDA, managed Prometheus."""

    derived_names = DERIVED
    release_schemes: ClassVar[tuple[str, ...]] = ("az",)
    doctor = AksDoctor()

    def refusals(self) -> Iterable[Refusal]:
        return [
            Refusal("aksGpuVmSize", size, why, catalog.SUGGESTED)
            for size, why in catalog.REFUSED.items()
        ]

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> AksConfig:
        location = read_location(reader)
        gpu_size = read_gpu_size(reader)
        gpus = catalog.SIZES[gpu_size].gpus
        low = reader.integer("aksGpuNodesMin", minimum=0)
        high = reader.integer("aksGpuNodesMax", minimum=1)
        check_capacity("aksGpuNodesMin", low, "aksGpuNodesMax", high)
        workload = fitted_workload(reader, read_workload_config(reader), self.nodes_with)
        if workload.kind == "gpu" and workload.gpus_per_pod > gpus:
            raise ConfigError(
                f"{qualify('k8sGpusPerPod')} ({workload.gpus_per_pod}) exceeds the {gpus} "
                f"GPU(s) of {gpu_size}: no node could run a pod",
                hint=f"lower {qualify('k8sGpusPerPod')} or pick a larger size",
            )
        release = require_release(common, "az")
        version = read_kubernetes_version(reader)
        blob = b.blob_release(release)
        return AksConfig(
            common=common,
            release=release,
            blob=blob,
            release_resource_group=read_release_group(reader, blob),
            location=location,
            kubernetes_version=version,
            keda_version=read_keda_chart(reader, version),
            gpu_vm_size=gpu_size,
            gpu_min_nodes=low,
            gpu_max_nodes=high,
            system_vm_size=reader.string("aksSystemVmSize"),
            system_max_nodes=reader.integer("aksSystemNodesMax", minimum=1),
            api_authorized_ranges=read_api_cidrs(reader, "aksApiAuthorizedIpRanges"),
            workload=workload,
            budget=read_budget(reader, email_required=True),
            model_sync_image=reader.string("aksModelSyncImage"),
        )

    def nodes_with(self, gpus: int) -> str:
        """The aks catalog's VM size with the fewest GPUs, at least ``gpus``."""
        fits = sorted((s.gpus, s.name) for s in catalog.SIZES.values() if s.gpus >= gpus)
        if not fits:
            return f"no Azure GPU VM size tdk knows has {gpus} GPUs"
        count, name = fits[0]
        return f"a multi-GPU aksGpuVmSize such as {name}, {count} GPUs"

    def cluster_minors(self, config: AksConfig) -> ClusterMinors:
        """The cluster's one minor (``aksKubernetesVersion``)."""
        minor = kf.minor(config.kubernetes_version)
        return ClusterMinors(
            minor, minor, f"{qualify('aksKubernetesVersion')} {config.kubernetes_version}"
        )

    def pod_offer(self, config: AksConfig) -> TargetSpec:
        """One Triton pod: the GPU pool's VM size, the pod's GPUs, the workload's image."""
        workload = config.workload
        node = vm_size_spec(config.common.target, config.gpu, workload.image)
        return pod_spec(config.common.target, node, workload.gpus_per_pod, workload.kind == "cpu")

    def declare(self, config: AksConfig) -> Mapping[str, Any]:
        from infra.targets.aks.stack import declare_aks

        return declare_aks(config)

    def store_copy(self, config: AksConfig, entry_url: str) -> StoreCopy:
        from infra.targets.aks.tensorrt import store_copy

        return store_copy(config, entry_url)

    def workload_spec(self, config: AksConfig, output: OutputValue) -> TritonServiceSpec:
        return triton_spec(
            config,
            output("tritonClientId"),
            output("buildClientId"),
            output("prometheusQueryUrl"),
        )

    def written_forms(self, key: str, value: str) -> tuple[str, ...]:
        """The release URL is written split: the sync's ``--account-name`` and
        ``--container-name`` (``builders.download_script``)."""
        if key != qualify("releaseUrl"):
            return (value,)
        try:
            blob = b.blob_release(parse_release_url(key, value, self.release_schemes))
        except ConfigError:
            return (value,)
        return (value, blob.account, blob.container)

    def cluster_manifests(self, config: AksConfig) -> list[Manifest]:
        """The Azure Monitor managed Prometheus PodMonitor for Triton's metrics port."""
        spec = triton_spec(config, "", "", "")
        return [b.pod_monitor(spec.name, spec.namespace, spec.selector, spec.metrics_ports)]


TARGET = AksTarget()
