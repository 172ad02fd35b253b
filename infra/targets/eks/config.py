"""The validated, frozen config of a eks stack (no Pulumi, no cloud SDK)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import infra.facts
from infra.clouds.aws import versions as eks
from infra.config import ConfigReader, ReleaseLocation, StackConfig, check_choice, qualify
from infra.k8s.config import WorkloadConfig, workload_spec
from infra.k8s.spec import TritonServiceSpec
from infra.targets.eks import builders as b
from infra.values.guardrails import Budget
from tdk.errors import ConfigError

SUPPORT_TYPES = ("STANDARD", "EXTENDED")


@dataclass(frozen=True)
class EksConfig:
    """The validated config of an eks stack."""

    common: StackConfig
    release: ReleaseLocation
    region: str
    zones: tuple[str, ...]
    kubernetes_version: str
    #: ``upgradePolicy.supportType`` of the cluster: STANDARD unless the stack opts in
    support_type: str
    #: KEDA chart: the stack's pin or the newest that supports the cluster's minor
    keda_version: str
    gpu_instance_type: str
    gpu_min_nodes: int
    gpu_max_nodes: int
    spot: bool
    system_instance_type: str
    system_max_nodes: int
    public_access_cidrs: tuple[str, ...]
    workload: WorkloadConfig
    budget: Budget | None
    log_retention_days: int
    #: the AWS CLI image that copies the release into each pod (``builders.model_sync``)
    model_sync_image: str


def read_kubernetes_version(reader: ConfigReader) -> tuple[str, str]:
    """(``eksKubernetesVersion``, ``eksSupportType``) checked against the EKS calendar today.

    Empty version: the newest in standard support for 60+ more days. A version past standard
    support is refused unless ``eksSupportType`` is EXTENDED (it costs more every month).
    """
    now = infra.facts.today()  # looked up at call time: tests may replace it
    support = check_choice(
        "eksSupportType", reader.string("eksSupportType").strip().upper(), SUPPORT_TYPES
    )
    version = reader.optional_string("eksKubernetesVersion") or eks.default_eks_version(now)
    src = eks.EKS_VERSIONS_SOURCE
    check_choice(
        "eksKubernetesVersion",
        version,
        eks.offered_eks_versions(now),
        f"EKS offers these on {now}; {src.url}, checked {src.checked}",
    )
    if eks.EKS_BY_VERSION[version].phase(now) == "extended" and support != "EXTENDED":
        ends = eks.EKS_BY_VERSION[version].standard_end
        raise ConfigError(
            f"{qualify('eksKubernetesVersion')} {version} left standard support on {ends} and "
            f"runs only in extended support: ${eks.EXTENDED_HOURLY_USD:.2f} instead of "
            f"${eks.STANDARD_HOURLY_USD:.2f} per cluster hour, about "
            f"${eks.extended_monthly_extra_usd():.0f} more a month ({eks.EKS_PRICE_SOURCE.url})",
            hint=f"remove {qualify('eksKubernetesVersion')} to get "
            f"{eks.default_eks_version(now)}, or opt in with "
            f"`pulumi config set {qualify('eksSupportType')} EXTENDED`",
        )
    return version, support


def triton_spec(
    config: EksConfig, role_arn: Any, build_role_arn: Any, prometheus_url: Any
) -> TritonServiceSpec:
    """The Triton workload of an eks stack.

    ``role_arn`` (Triton's IRSA role), ``build_role_arn`` (the engine builder's) and
    ``prometheus_url`` (the AMP query endpoint) are Pulumi outputs under ``pulumi up`` and
    strings under ``tdk render k8s``.
    """
    repository = f"{config.release.url}/repository"
    return workload_spec(
        config.workload,
        name=config.common.name,
        load_balancers=b.LOAD_BALANCER_ANNOTATIONS,
        model_repository=repository,
        release_url=config.release.url,
        model_sync=b.model_sync(config.model_sync_image, repository),
        prometheus=b.amp_source(cast(str, prometheus_url), config.region),
        identity=b.workload_identity(role_arn),
        builder=b.workload_identity(build_role_arn),
        env={"AWS_REGION": config.region, "AWS_DEFAULT_REGION": config.region},
        pod_monitoring=False,  # the AMP managed scraper needs no in-cluster object
    )
