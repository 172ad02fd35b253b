"""The ``sagemaker`` target: a Triton multi-model endpoint (``tdk:aws:SageMakerMme``)."""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws.guardrails import read_log_retention
from infra.clouds.aws.offer import instance_spec
from infra.clouds.aws.sagemaker.env import TritonKnobs, container_environment
from infra.clouds.aws.sagemaker.instances import (
    GPU_FAMILIES,
    REFUSED_FAMILIES,
    InstanceKind,
    classify_instance,
    host_ami,
    read_triton_version,
)
from infra.clouds.aws.sagemaker.monitoring import AlarmThresholds
from infra.clouds.aws.sagemaker.settings import alarm_email, created_release_prefix
from infra.config import (
    ConfigReader,
    StackConfig,
    check_capacity,
)
from infra.targets.base import EXAMPLE_TARGET_MODEL, DoctorPort, Refusal, Target
from infra.targets.capabilities import Refused
from infra.targets.sagemaker.cloud_names import DERIVED
from infra.targets.sagemaker.config import SageMakerConfig
from infra.targets.sagemaker.rollout import STRATEGIES, Rollout, check_rollout
from infra.targets.sagemaker.scaling import ScalingSettings
from infra.values.guardrails import read_budget
from infra.values.offer import TargetSpec

if TYPE_CHECKING:
    from infra.facts.findings import Finding

#: the instance type the hints offer (the Pulumi.yaml default)
SUGGESTED_INSTANCE = "ml.g4dn.xlarge"


def _scaling(reader: ConfigReader) -> ScalingSettings:
    low = reader.integer("sagemakerMinInstances", minimum=1)
    high = reader.integer("sagemakerMaxInstances", minimum=1)
    check_capacity("sagemakerMinInstances", low, "sagemakerMaxInstances", high)
    on_gpu = reader.boolean("sagemakerScaleOnGpu")
    gpu_target = reader.integer("sagemakerGpuUtilizationTarget", minimum=1, maximum=100)
    return ScalingSettings(
        min_instances=low,
        max_instances=high,
        invocations_per_instance=reader.integer("sagemakerInvocationsPerInstance", minimum=1),
        gpu_utilization_target=gpu_target if on_gpu else None,
        scale_in_cooldown=reader.integer("sagemakerScaleInCooldownSeconds", minimum=0),
        scale_out_cooldown=reader.integer("sagemakerScaleOutCooldownSeconds", minimum=0),
    )


def _thresholds(reader: ConfigReader) -> AlarmThresholds:
    return AlarmThresholds(
        latency_slo_ms=reader.integer("sagemakerLatencySloMs", minimum=1),
        error_rate_percent=reader.integer("sagemakerErrorRatePercent", minimum=0, maximum=100),
        gpu_memory_percent=reader.integer("sagemakerGpuMemoryAlarmPercent", minimum=1, maximum=100),
        disk_percent=reader.integer("sagemakerDiskAlarmPercent", minimum=1, maximum=100),
        cache_hit_percent=reader.integer("sagemakerCacheHitAlarmPercent", minimum=0, maximum=100),
    )


def _knobs(reader: ConfigReader, instance: InstanceKind) -> TritonKnobs:
    limit = reader.number("sagemakerTritonModelLoadGpuLimit", minimum=0.05, maximum=1.0)
    return TritonKnobs(
        log_verbose=reader.integer("sagemakerTritonLogVerbose", minimum=0),
        thread_count=reader.integer("sagemakerTritonThreadCount", minimum=0),
        buffer_manager_threads=reader.integer("sagemakerTritonBufferManagerThreads", minimum=0),
        shm_default_bytes=reader.integer("sagemakerTritonShmDefaultBytes", minimum=1 << 20),
        shm_growth_bytes=reader.integer("sagemakerTritonShmGrowthBytes", minimum=1 << 16),
        model_load_gpu_limit=limit if instance.gpus else None,
    )


class SageMakerDoctor(DoctorPort[SageMakerConfig]):
    """What ``tdk doctor`` checks of a SageMaker stack."""

    def facts(self, config: SageMakerConfig, today: dt.date) -> list[Finding]:
        from infra.clouds.aws.sagemaker import doctor

        return doctor.findings(config.triton_version, config.inference_ami_version, today)


class SageMakerTarget(Target[SageMakerConfig]):
    """SageMaker MME running the SageMaker Triton image, releases read from S3."""

    derived_names = DERIVED
    release_schemes: ClassVar[tuple[str, ...]] = ("s3",)
    doctor = SageMakerDoctor()
    build = Refused(
        "a SageMaker endpoint runs no build jobs; build on its instance type (docs/build.md)"
    )
    render = Refused(
        "SageMaker runs the Triton container itself; there is no cluster to apply manifests to"
    )

    def refusals(self) -> Iterable[Refusal]:
        for family, sizes in GPU_FAMILIES.items():
            for size, gpus in sizes.items():
                if gpus > 1:
                    reason = f"{gpus} GPUs; Triton MME runs on single-GPU instances only"
                    yield Refusal(
                        "sagemakerInstanceType", f"ml.{family}.{size}", reason, SUGGESTED_INSTANCE
                    )
        for family, reason in REFUSED_FAMILIES.items():
            yield Refusal("sagemakerInstanceType", f"ml.{family}.*", reason, SUGGESTED_INSTANCE)

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> SageMakerConfig:
        region = reader.string("aws:region")
        version = read_triton_version(reader, region)
        ami = host_ami(reader, "sagemakerInferenceAmiVersion", version, "sagemakerInstanceType")
        instance = classify_instance(
            "sagemakerInstanceType", reader.string("sagemakerInstanceType")
        )
        step = reader.integer("sagemakerRolloutStepPercent", minimum=1, maximum=100)
        strategy = reader.choice("sagemakerRolloutStrategy", STRATEGIES)
        check_rollout(strategy, step)
        return SageMakerConfig(
            common=common,
            region=region,
            instance=instance,
            triton_version=version,
            inference_ami_version=ami,
            knobs=_knobs(reader, instance),
            scaling=_scaling(reader),
            thresholds=_thresholds(reader),
            rollout=Rollout(
                strategy=strategy,
                step_percent=step,
                wait_seconds=reader.integer("sagemakerRolloutWaitSeconds", minimum=0, maximum=3600),
            ),
            alarm_email=alarm_email(reader),
            created_release_prefix=created_release_prefix(reader),
            budget=read_budget(reader, email_required=True),
            log_retention_days=read_log_retention(reader),
        )

    def offer(self, config: SageMakerConfig) -> TargetSpec:
        """One MME instance: its GPU (or CPU), its disk, the stack's Triton image."""
        return instance_spec(
            config.common.target, config.instance.instance_type, config.triton_version,
            prefix="ml.", mme=True, cpu=True,
        )  # fmt: skip

    def declare(self, config: SageMakerConfig) -> Mapping[str, Any]:
        from infra.clouds.aws.sagemaker.instances import triton_image
        from infra.targets.sagemaker.mme import SageMakerMme, SageMakerMmeArgs

        endpoint = config.common.name
        mme = SageMakerMme(
            endpoint,
            SageMakerMmeArgs(
                endpoint_name=endpoint,
                region=config.region,
                image_uri=triton_image(config.region, config.triton_version, config.instance),
                instance=config.instance,
                inference_ami_version=config.inference_ami_version,
                release=config.common.release,
                environment=container_environment(config.knobs),
                scaling=config.scaling,
                thresholds=config.thresholds,
                rollout=config.rollout,
                alarm_email=config.alarm_email,
                created_release_prefix=config.created_release_prefix,
                budget=config.budget,
                log_retention_days=config.log_retention_days,
            ),
        )
        outputs: dict[str, Any] = {
            "endpointName": mme.endpoint_name,
            "region": config.region,
            "releaseUrl": mme.release_url,
            "dashboardUrl": mme.dashboard_url,
            "roleArn": mme.role_arn,
            "invokeCommand": mme.release_url.apply(
                lambda url: invoke_command(config.common.target, endpoint, config.region, url)
            ),
        }
        if mme.alarm_topic_arn is not None:
            outputs["alarmTopicArn"] = mme.alarm_topic_arn
        return outputs


def invoke_command(target: str, endpoint: str, region: str, release_url: str) -> str:
    """The exact ``tdk invoke`` line for this endpoint of ``target`` (the sample model as the
    example)."""
    return shlex.join(
        [
            "tdk", "invoke", "--target", target, "--endpoint", endpoint,
            "--region", region, "--release", release_url,
            "--target-model", EXAMPLE_TARGET_MODEL, "--text", "a short test sentence",
        ]
    )  # fmt: skip


TARGET = SageMakerTarget()
