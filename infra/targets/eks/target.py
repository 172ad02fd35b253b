"""The ``eks`` target: EKS with a managed GPU node group running the shared Triton workload."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws.guardrails import read_log_retention
from infra.clouds.aws.offer import instance_spec
from infra.config import ConfigReader, StackConfig, check_capacity, qualify
from infra.facts import kubernetes as kf
from infra.k8s.build_job import StoreCopy
from infra.k8s.common import ClusterMinors, KubernetesTarget, csv, require_release
from infra.k8s.config import read_keda_chart, read_workload_config
from infra.k8s.models import fitted_workload
from infra.k8s.spec import TritonServiceSpec
from infra.targets.base import DoctorPort, Manifest, OutputValue, Refusal, SchemaDrift
from infra.targets.checks import pod_spec
from infra.targets.eks import builders as b
from infra.targets.eks.cloud_names import DERIVED, front_repository
from infra.targets.eks.config import (
    EksConfig,
    read_kubernetes_version,
    triton_spec,
)
from infra.targets.eks.observability import scraper_rbac
from infra.values.guardrails import read_api_cidrs, read_budget
from infra.values.offer import TargetSpec
from tdk.errors import ConfigError

if TYPE_CHECKING:
    from infra.facts.findings import Finding

_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


def _region(reader: ConfigReader) -> str:
    region = reader.string("aws:region")
    if not _REGION.match(region):
        raise ConfigError(
            f"aws:region is {region!r}, not an AWS region (like us-east-1)",
            hint="`pulumi config set aws:region us-east-1`",
        )
    return region


def _zones(reader: ConfigReader, region: str) -> tuple[str, ...]:
    zones = csv(reader, "eksAvailabilityZones") or (f"{region}a", f"{region}b")
    if len(zones) < 2 or len(zones) > 3 or not all(z.startswith(region) for z in zones):
        raise ConfigError(
            f"{qualify('eksAvailabilityZones')} is {','.join(zones)!r}: EKS needs 2 or 3 zones "
            f"of {region}",
            hint=f"`pulumi config set {qualify('eksAvailabilityZones')} {region}a,{region}b`",
        )
    return zones


def eks_client(region: str) -> Any:
    """The EKS API client ``doctor --online`` asks (a seam for botocore's Stubber)."""
    import boto3

    return boto3.client("eks", region_name=region)


#: a GPU instance type the hints offer (the Pulumi.yaml default)
SUGGESTED_GPU_INSTANCE = "g5.xlarge"


def _gpu_instance(reader: ConfigReader) -> str:
    """An instance type of a supported GPU family (refused families never get here)."""
    instance = reader.string("eksGpuInstanceType")
    family, size = b.split_instance(instance) or ("", "")
    if family in b.GPU_FAMILIES and not b.gpus_of(instance):
        sizes = ", ".join(f"{family}.{s}" for s in aws_catalog.EC2_GPU_FAMILIES[family].gpus)
        raise ConfigError(
            f"{qualify('eksGpuInstanceType')} is {instance!r}: {family} has no size {size!r} "
            f"in tdk's hardware table (infra/facts/hardware.py)",
            hint=f"use one of {sizes}",
        )
    if family not in b.GPU_FAMILIES:
        key = qualify("eksGpuInstanceType")
        raise ConfigError(
            f"{key} is {instance!r}, not an instance type of a supported GPU family; "
            f"supported families: {', '.join(f + '.<size>' for f in b.GPU_FAMILIES)}",
            hint=f"`pulumi config set {key} {SUGGESTED_GPU_INSTANCE}`",
        )
    return instance


class EksDoctor(DoctorPort[EksConfig]):
    """What ``tdk doctor`` checks of an EKS stack."""

    def schema_drift(self, config: EksConfig) -> list[SchemaDrift]:
        """The kit's facts against the installed Pulumi providers' schemas."""
        del config
        from infra.targets.eks import schema

        return schema.drift()

    def facts(self, config: EksConfig, today: dt.date) -> list[Finding]:
        from infra.targets.eks import doctor

        return doctor.findings(config, today)

    def online_drift(self, config: EksConfig) -> tuple[str, list[str]] | None:
        """The calendar against EKS's DescribeClusterVersions in the stack's region."""
        from infra.clouds.aws import versions

        return versions.API, versions.drift(versions.describe(eks_client(config.region)))


class EksTarget(KubernetesTarget[EksConfig]):
    """EKS: cluster, GPU node group, Triton workload, KEDA, AMP, CloudWatch."""

    derived_names = DERIVED
    release_schemes: ClassVar[tuple[str, ...]] = ("s3",)
    doctor = EksDoctor()

    def refusals(self) -> Iterable[Refusal]:
        return [
            Refusal("eksGpuInstanceType", f"{family}.*", why, SUGGESTED_GPU_INSTANCE)
            for family, why in b.REFUSED_FAMILIES.items()
        ]

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> EksConfig:
        region = _region(reader)
        instance = _gpu_instance(reader)
        low = reader.integer("eksGpuNodesMin", minimum=0)
        high = reader.integer("eksGpuNodesMax", minimum=1)
        check_capacity("eksGpuNodesMin", low, "eksGpuNodesMax", high)
        workload = fitted_workload(reader, read_workload_config(reader), self.nodes_with)
        if workload.kind == "gpu" and workload.gpus_per_pod > b.gpus_of(instance):
            raise ConfigError(
                f"{qualify('k8sGpusPerPod')} ({workload.gpus_per_pod}) exceeds the "
                f"{b.gpus_of(instance)} GPU(s) of {instance}: no node could run a pod",
                hint=f"lower {qualify('k8sGpusPerPod')} or pick a larger instance",
            )
        if workload.mme is not None and workload.mme.front_image is None:
            front_repository(common.name)  # the stack builds the front: its ECR name fits
        version, support_type = read_kubernetes_version(reader)
        return EksConfig(
            common=common,
            release=require_release(common, "s3"),
            region=region,
            zones=_zones(reader, region),
            kubernetes_version=version,
            support_type=support_type,
            keda_version=read_keda_chart(reader, version),
            gpu_instance_type=instance,
            gpu_min_nodes=low,
            gpu_max_nodes=high,
            spot=reader.boolean("eksSpot"),
            system_instance_type=reader.string("eksSystemInstanceType"),
            system_max_nodes=reader.integer("eksSystemNodesMax", minimum=1),
            public_access_cidrs=read_api_cidrs(reader, "eksPublicAccessCidrs"),
            workload=workload,
            budget=read_budget(reader, email_required=True),
            log_retention_days=read_log_retention(reader),
            model_sync_image=reader.string("eksModelSyncImage"),
        )

    def nodes_with(self, gpus: int) -> str:
        """An EC2 instance type of the AWS catalog with at least ``gpus`` GPUs (the fewest)."""
        fits = sorted(
            (count, f"{family}.{size}", offer.gpu)
            for family, offer in aws_catalog.EC2_GPU_FAMILIES.items()
            for size, count in offer.gpus.items()
            if count >= gpus
        )
        if not fits:
            return f"no EC2 GPU instance type tdk knows has {gpus} GPUs"
        count, name, gpu = fits[0]
        return f"a multi-GPU eksGpuInstanceType such as {name}, {count} {gpu}"

    def cluster_minors(self, config: EksConfig) -> ClusterMinors:
        """The cluster's one minor (``eksKubernetesVersion``)."""
        minor = kf.minor(config.kubernetes_version)
        return ClusterMinors(
            minor, minor, f"{qualify('eksKubernetesVersion')} {config.kubernetes_version}"
        )

    def pod_offer(self, config: EksConfig) -> TargetSpec:
        """One Triton pod: the node group's GPU, the pod's GPUs, the workload's image."""
        workload = config.workload
        node = instance_spec(config.common.target, config.gpu_instance_type, workload.image)
        node = replace(node, node_driver=b.EKS_NVIDIA_AMI_DRIVER)  # the NVIDIA AMI's driver
        return pod_spec(config.common.target, node, workload.gpus_per_pod, workload.kind == "cpu")

    def declare(self, config: EksConfig) -> Mapping[str, Any]:
        from infra.targets.eks.stack import declare_eks

        return declare_eks(config)

    def store_copy(self, config: EksConfig, entry_url: str) -> StoreCopy:
        from infra.targets.eks.tensorrt import store_copy

        return store_copy(config, entry_url)

    def workload_spec(self, config: EksConfig, output: OutputValue) -> TritonServiceSpec:
        prometheus_url = b.amp_query_url(config.region, output("ampWorkspaceId"))
        return triton_spec(config, output("tritonRoleArn"), output("buildRoleArn"), prometheus_url)

    def cluster_manifests(self, config: EksConfig) -> list[Manifest]:
        """The AMP scraper's ClusterRole and binding (AMP maps its role to that user)."""
        del config
        return scraper_rbac()


TARGET = EksTarget()
