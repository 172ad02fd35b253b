"""The validated, frozen config of a gke stack (no Pulumi, no cloud SDK)."""

from __future__ import annotations

from dataclasses import dataclass

from infra.clouds.gcp import identity
from infra.clouds.gcp import versions as gke
from infra.config import ReleaseLocation, StackConfig
from infra.k8s.config import WorkloadConfig, workload_spec
from infra.k8s.spec import TritonServiceSpec
from infra.targets.gke import builders as b
from infra.values.guardrails import Budget


@dataclass(frozen=True)
class GkeConfig:
    """The validated config of a gke stack."""

    common: StackConfig
    release: ReleaseLocation
    project: str
    region: str
    gpu_pool: b.GpuPool
    release_channel: str
    system_machine_type: str
    system_max_nodes: int
    master_cidr: str
    authorized_networks: tuple[str, ...]
    workload: WorkloadConfig
    budget: Budget | None
    #: Cloud Billing account of the project; None: no billing budget is declared
    billing_account: str | None

    @property
    def keda_version(self) -> str:
        """KEDA's chart for the release channel's newest Kubernetes minor."""
        return gke.keda_for_channel(self.release_channel).version


def triton_spec(config: GkeConfig) -> TritonServiceSpec:
    """The Triton workload of a gke stack (Pulumi applies it; ``tdk render k8s`` writes it)."""
    name = config.common.name
    email = identity.service_account_email(b.triton_account_id(name), config.project)
    builder = identity.service_account_email(b.build_account_id(name), config.project)
    return workload_spec(
        config.workload,
        name=name,
        load_balancers=b.LOAD_BALANCER_ANNOTATIONS,
        model_repository=f"{config.release.url}/repository",
        release_url=config.release.url,
        prometheus=b.managed_prometheus_source(config.project),
        identity=b.workload_identity(email),
        builder=b.workload_identity(builder),
        env={},
        pod_monitoring=True,  # Google Managed Prometheus scrapes through PodMonitoring
    )
