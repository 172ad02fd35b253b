"""The ``gke`` target: a private GKE cluster with a GPU pool running the shared Triton workload."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.gcp import catalog as gcp_catalog
from infra.clouds.gcp import versions as gke
from infra.clouds.gcp.offer import accelerator_spec
from infra.config import ConfigReader, StackConfig, check_capacity, qualify
from infra.facts.drivers import NodeDriver
from infra.k8s.build_job import StoreCopy
from infra.k8s.common import ClusterMinors, KubernetesTarget, csv, require_release
from infra.k8s.config import read_workload_config
from infra.k8s.models import fitted_workload
from infra.k8s.spec import TritonServiceSpec
from infra.targets.base import DoctorPort, OutputValue, Refusal, SchemaDrift
from infra.targets.checks import pod_spec
from infra.targets.gke import builders as b
from infra.targets.gke.cloud_names import DERIVED
from infra.targets.gke.config import GkeConfig, triton_spec
from infra.values.guardrails import read_api_cidrs, read_budget
from infra.values.offer import TargetSpec
from tdk.errors import ConfigError

if TYPE_CHECKING:
    from infra.facts.findings import Finding

_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_BILLING_ACCOUNT = re.compile(r"^[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}$")


def _project_region(reader: ConfigReader) -> tuple[str, str]:
    project = reader.string("gcp:project")
    region = reader.string("gcp:region")
    if not _PROJECT.match(project):
        raise ConfigError(
            f"gcp:project is {project!r}, not a Google Cloud project id",
            hint="`pulumi config set gcp:project <your-project-id>`",
        )
    if not _REGION.match(region):
        raise ConfigError(
            f"gcp:region is {region!r}, not a region (like us-central1)",
            hint="`pulumi config set gcp:region us-central1`",
        )
    return project, region


def _billing_account(reader: ConfigReader) -> str | None:
    account = reader.optional_string("gkeBillingAccount")
    if account is not None and not _BILLING_ACCOUNT.match(account):
        raise ConfigError(
            f"{qualify('gkeBillingAccount')} is {account!r}, not a Cloud Billing account id",
            hint="use the form 012345-6789AB-CDEF01 (`gcloud billing accounts list`), or empty",
        )
    return account


#: the accelerator the hints offer (the Pulumi.yaml default)
SUGGESTED_ACCELERATOR = "nvidia-l4"


def gke_session() -> Any:
    """An authorized HTTP session (Application Default Credentials) for ``doctor --online``."""
    import google.auth
    from google.auth.transport.requests import AuthorizedSession

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    return AuthorizedSession(credentials)


class GkeDoctor(DoctorPort[GkeConfig]):
    """What ``tdk doctor`` checks of a GKE stack."""

    def schema_drift(self, config: GkeConfig) -> list[SchemaDrift]:
        """The kit's facts against the installed Pulumi providers' schemas."""
        del config
        from infra.targets.gke import schema

        return schema.drift()

    def facts(self, config: GkeConfig, today: dt.date) -> list[Finding]:
        from infra.targets.gke import doctor

        return doctor.findings(config, today)

    def online_drift(self, config: GkeConfig) -> tuple[str, list[str]] | None:
        """The release-channel table against GKE's getServerConfig in the stack's region."""
        from infra.clouds.gcp import versions

        answer = versions.server_config(gke_session(), config.project, config.region)
        return versions.API, versions.drift(answer)


#: where Google lists the driver each gkeGpuDriverVersion installs per GKE version
GKE_DRIVER_DOCS = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#installing_drivers"


def _node_driver(driver_version: str) -> NodeDriver:
    """GKE installs the driver ``gkeGpuDriverVersion`` names for the node's GKE version;
    Google's per-version table was not in the sources read on 2026-12-07: unknown."""
    return NodeDriver(None, GKE_DRIVER_DOCS, why=(
        f"gkeGpuDriverVersion {driver_version} installs the driver Google lists per GKE "
        f"version ({GKE_DRIVER_DOCS}), which tdk has not recorded"))  # fmt: skip


class GkeTarget(KubernetesTarget[GkeConfig]):
    """GKE: cluster, GPU pool, Triton workload, KEDA, Managed Prometheus, dashboards, alerts."""

    derived_names = DERIVED
    release_schemes: ClassVar[tuple[str, ...]] = ("gs",)
    doctor = GkeDoctor()

    def refusals(self) -> Iterable[Refusal]:
        return [
            Refusal("gkeGpuType", accelerator, why, SUGGESTED_ACCELERATOR)
            for accelerator, why in b.REFUSED_ACCELERATORS.items()
        ]

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> GkeConfig:
        project, region = _project_region(reader)
        accelerator = reader.choice("gkeGpuType", b.ACCELERATORS)
        machine = reader.string("gkeMachineType")
        family = b.ACCELERATORS[accelerator].machine_prefix
        if not machine.startswith(family):
            raise ConfigError(
                f"{qualify('gkeMachineType')} is {machine!r}, but {accelerator} attaches only "
                f"to {family}* machine types",
                hint=f"`pulumi config set {qualify('gkeMachineType')} {family}...`",
            )
        low = reader.integer("gkeGpuNodesMin", minimum=0)
        high = reader.integer("gkeGpuNodesMax", minimum=1)
        check_capacity("gkeGpuNodesMin", low, "gkeGpuNodesMax", high)
        workload = fitted_workload(reader, read_workload_config(reader), self.nodes_with)
        gpus_per_node = reader.integer("gkeGpusPerNode", minimum=1, maximum=8)
        if workload.kind == "gpu" and workload.gpus_per_pod > gpus_per_node:
            raise ConfigError(
                f"{qualify('k8sGpusPerPod')} ({workload.gpus_per_pod}) exceeds "
                f"{qualify('gkeGpusPerNode')} ({gpus_per_node}): no node could run a pod",
                hint=f"set {qualify('k8sGpusPerPod')} <= {qualify('gkeGpusPerNode')}",
            )
        pool = b.GpuPool(
            accelerator=accelerator,
            machine_type=machine,
            gpus_per_node=gpus_per_node,
            min_nodes=low,
            max_nodes=high,
            spot=reader.boolean("gkeSpot"),
            driver_version=reader.choice("gkeGpuDriverVersion", b.GPU_DRIVER_VERSIONS),
            zones=csv(reader, "gkeNodeZones"),
        )
        return GkeConfig(
            common=common,
            release=require_release(common, "gs"),
            project=project,
            region=region,
            gpu_pool=pool,
            release_channel=reader.choice("gkeReleaseChannel", b.RELEASE_CHANNELS),
            system_machine_type=reader.string("gkeSystemMachineType"),
            system_max_nodes=reader.integer("gkeSystemNodesMax", minimum=1),
            master_cidr=reader.string("gkeMasterCidr"),
            authorized_networks=read_api_cidrs(reader, "gkeAuthorizedNetworks"),
            workload=workload,
            budget=read_budget(reader, email_required=False),
            billing_account=_billing_account(reader),
        )

    def cluster_minors(self, config: GkeConfig) -> ClusterMinors:
        """The release channel's minors (GKE upgrades the cluster up to its newest)."""
        low, high = gke.GKE_CHANNELS[config.release_channel]
        return ClusterMinors(low, high, f"{qualify('gkeReleaseChannel')} {config.release_channel}")

    def nodes_with(self, gpus: int) -> str:
        """The smallest G2 machine (L4s) with ``gpus`` GPUs, as the gke keys take it."""
        machine = gcp_catalog.smallest_g2(gpus)
        if machine is None:
            return f"no G2 machine has {gpus} L4s: a larger A2/A3 gkeMachineType"
        return f"gkeMachineType {machine} with gkeGpusPerNode {gpus}"

    def pod_offer(self, config: GkeConfig) -> TargetSpec:
        """One Triton pod: the pool's accelerator, the pod's GPUs, the workload's image."""
        pool, workload, target = config.gpu_pool, config.workload, config.common.target
        node = accelerator_spec(target, pool.accelerator, workload.image, pool.gpus_per_node)
        node = replace(node, node_driver=_node_driver(pool.driver_version))
        return pod_spec(target, node, workload.gpus_per_pod, workload.kind == "cpu")

    def declare(self, config: GkeConfig) -> Mapping[str, Any]:
        from infra.targets.gke.stack import declare_gke

        return declare_gke(config)

    def store_copy(self, config: GkeConfig, entry_url: str) -> StoreCopy:
        from infra.targets.gke.tensorrt import store_copy

        return store_copy(config, entry_url)

    def workload_spec(self, config: GkeConfig, output: OutputValue) -> TritonServiceSpec:
        del output  # every value of a gke workload is known from its config
        return triton_spec(config)


TARGET = GkeTarget()
