"""The validated, frozen config of an aks stack, and the aks reading of its keys (no Pulumi,
no Azure SDK)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

import infra.facts
from infra.clouds.azure import catalog, versions
from infra.config import ConfigReader, ReleaseLocation, StackConfig, check_choice, qualify
from infra.k8s.config import WorkloadConfig, workload_spec
from infra.k8s.spec import MODEL_SYNC_PATH, ModelSync, PrometheusSource, TritonServiceSpec
from infra.targets.aks import builders as b
from infra.values.guardrails import Budget
from tdk.errors import ConfigError

#: Azure region names as ARM spells them (eastus, westeurope, southcentralus, ...)
_LOCATION = re.compile(r"^[a-z]+[a-z0-9]*$")
LOCATION_KEY = "azure-native:location"


@dataclass(frozen=True)
class AksConfig:
    """The validated config of an aks stack."""

    common: StackConfig
    release: ReleaseLocation
    blob: b.BlobRelease
    #: the resource group of the release's storage account (the reader role's scope)
    release_resource_group: str
    location: str
    kubernetes_version: str
    #: KEDA chart: the stack's pin or the newest that supports the cluster's minor
    keda_version: str
    gpu_vm_size: str
    gpu_min_nodes: int
    gpu_max_nodes: int
    system_vm_size: str
    system_max_nodes: int
    api_authorized_ranges: tuple[str, ...]
    workload: WorkloadConfig
    budget: Budget | None
    #: the Azure CLI image that copies the release into each pod (see ``builders.sync_command``)
    model_sync_image: str

    @property
    def gpu(self) -> catalog.VmSize:
        found = catalog.size(self.gpu_vm_size)
        assert found is not None  # read_gpu_size refused any other
        return found


def read_location(reader: ConfigReader) -> str:
    location = reader.string(LOCATION_KEY)
    if not _LOCATION.match(location):
        raise ConfigError(
            f"{LOCATION_KEY} is {location!r}, not an Azure region name (like eastus)",
            hint=f"`pulumi config set {LOCATION_KEY} eastus` (`az account list-locations -o "
            "table` lists them)",
        )
    return location


def read_release_group(reader: ConfigReader, blob: b.BlobRelease) -> str:
    """``aksReleaseResourceGroup``: where the release's storage account is (an ARM id needs
    it; the reader role is scoped to the release's container and prefix)."""
    group = reader.optional_string("aksReleaseResourceGroup")
    if group is None:
        key = qualify("aksReleaseResourceGroup")
        raise ConfigError(
            f"{key} is empty: the role that lets Triton's pods read the release is scoped to "
            f"the storage account {blob.account!r}, whose resource group the kit must name",
            hint=f"`pulumi config set {key} <group>` (`az storage account show -n "
            f"{blob.account} --query resourceGroup -o tsv`)",
        )
    return group


def read_gpu_size(reader: ConfigReader) -> str:
    """``aksGpuVmSize``: a GPU size of the catalog (refused sizes never get here)."""
    key = qualify("aksGpuVmSize")
    value = reader.string("aksGpuVmSize")
    found = catalog.size(value)
    if found is None:
        names = ", ".join(catalog.SIZES)
        raise ConfigError(
            f"{key} is {value!r}, not a GPU VM size in tdk's Azure catalog "
            f"(infra/clouds/azure/catalog.py, {catalog.SIZES_SOURCE.url}); known: {names}",
            hint=f"`pulumi config set {key} {catalog.SUGGESTED}`",
        )
    return found.name


def read_kubernetes_version(reader: ConfigReader) -> str:
    """``aksKubernetesVersion`` checked against the AKS calendar today (empty: the newest GA
    minor supported 60+ more days that the kit's KEDA table covers)."""
    now = infra.facts.today()
    pinned = reader.optional_string("aksKubernetesVersion")
    version = pinned or versions.default(now, versions.keda_minors())
    src = versions.SOURCE
    check_choice(
        "aksKubernetesVersion",
        version,
        versions.offered(now, lts=False),
        f"AKS supports these on {now} ({src.url}, checked {src.checked}); LTS versions need "
        "the Premium tier, which the kit does not declare",
    )
    return version


def triton_spec(
    config: AksConfig, client_id: Any, build_client_id: Any, prometheus_url: Any
) -> TritonServiceSpec:
    """The Triton workload of an aks stack. ``client_id`` (the workload identity Triton's pods
    run as), ``build_client_id`` (the one ``tdk build``'s Job runs as) and ``prometheus_url``
    (the Azure Monitor workspace's query endpoint) are Pulumi outputs under ``pulumi up`` and
    placeholders under ``tdk render k8s``."""
    return workload_spec(
        config.workload,
        name=config.common.name,
        load_balancers=b.LOAD_BALANCER_ANNOTATIONS,
        model_repository=config.blob.blob_url("repository"),
        release_url=config.release.url,
        model_sync=sync(config),
        prometheus=PrometheusSource(cast(str, prometheus_url), b.KEDA_PROVIDER),
        identity=b.workload_identity(client_id),
        builder=b.workload_identity(build_client_id),
        env={},
        pod_monitoring=False,  # the Azure Monitor PodMonitor is the target's own manifest
    )


def sync(config: AksConfig) -> ModelSync:
    """The init container copying ``<release>/repository`` into the pod (workload identity)."""
    return ModelSync(config.model_sync_image, b.sync_command(config.blob, MODEL_SYNC_PATH))
