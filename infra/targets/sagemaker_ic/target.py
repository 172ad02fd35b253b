"""The ``sagemaker-ic`` target: one SageMaker inference component per model copy.

Reuses the MME target's pieces: the Triton image choice (``sagemaker.instances.triton_image``),
the container environment of Triton knobs, the execution role, the release bucket and the
monitoring style; only what components add lives here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws.generated import enum
from infra.clouds.aws.guardrails import read_log_retention
from infra.clouds.aws.offer import instance_spec
from infra.clouds.aws.sagemaker.components import check_component_names
from infra.clouds.aws.sagemaker.env import TritonKnobs, container_environment
from infra.clouds.aws.sagemaker.instances import NO_ENGINE_IMAGE, host_ami, read_triton_version
from infra.clouds.aws.sagemaker.settings import alarm_email, created_release_prefix
from infra.config import (
    RELEASE_URL,
    ConfigReader,
    StackConfig,
    check_capacity,
    check_choice,
    qualify,
    renamed,
)
from infra.targets.base import DoctorPort, Refusal, Shortfall, Target
from infra.targets.capabilities import Refused
from infra.targets.sagemaker_ic.builders import ROLLING_PERCENT
from infra.targets.sagemaker_ic.cloud_names import DERIVED
from infra.targets.sagemaker_ic.config import (
    INSTANCE_KEY,
    AwaitingRelease,
    ComponentSpec,
    IcScaling,
    IcThresholds,
    Rolling,
    SageMakerIcConfig,
    Startup,
)
from infra.targets.sagemaker_ic.generate import check_generate_image
from infra.targets.sagemaker_ic.models import (
    MODELS_KEY,
    CopyRequest,
    declared_copies,
    manifest_copies,
    published,
    with_manifest,
)
from infra.targets.sagemaker_ic.sizing import (
    IcInstance,
    describe_demand,
    ic_instance,
    instances_needed,
    requirements,
)
from infra.values.guardrails import read_budget
from infra.values.offer import TargetSpec
from tdk.errors import ConfigError

#: the deprecated key that named the release before releaseUrl did (issue 40 item 4)
OLD_RELEASE_KEY = "sagemakerIcManifestUrl"

if TYPE_CHECKING:
    from infra.facts.findings import Finding

SUGGESTED_INSTANCE = "ml.g5.xlarge"
#: GPU values of botocore's ProductionVariantInferenceAmiVersion enum (aws/generated.json)
AMI_VERSIONS = tuple(
    v for v in enum("sagemaker.ProductionVariantInferenceAmiVersion") if "-gpu-" in v
)


def inference_ami_version(reader: ConfigReader, version: str) -> str:
    """The one place the variant's InferenceAmiVersion is chosen: the stack's key, or derived
    from the image's CUDA (infra/clouds/aws/sagemaker/images.py); a GPU too old for the image
    is refused."""
    ami = host_ami(reader, "sagemakerIcInferenceAmiVersion", version, INSTANCE_KEY)
    assert ami is not None  # sagemaker-ic instances are GPU instances
    return check_choice(
        "sagemakerIcInferenceAmiVersion", ami, AMI_VERSIONS,
        why="not a GPU inference AMI SageMaker lists",
    )  # fmt: skip


def _knobs(reader: ConfigReader) -> TritonKnobs:
    return TritonKnobs(
        log_verbose=reader.integer("sagemakerTritonLogVerbose", minimum=0),
        thread_count=reader.integer("sagemakerTritonThreadCount", minimum=0),
        buffer_manager_threads=reader.integer("sagemakerTritonBufferManagerThreads", minimum=0),
        shm_default_bytes=reader.integer("sagemakerTritonShmDefaultBytes", minimum=1 << 20),
        shm_growth_bytes=reader.integer("sagemakerTritonShmGrowthBytes", minimum=1 << 16),
        model_load_gpu_limit=reader.number(
            "sagemakerTritonModelLoadGpuLimit", minimum=0.05, maximum=1.0
        ),
    )


def _scaling(reader: ConfigReader) -> IcScaling:
    low = reader.integer("sagemakerIcMinInstances", minimum=0)
    high = reader.integer("sagemakerIcMaxInstances", minimum=1)
    check_capacity("sagemakerIcMinInstances", low, "sagemakerIcMaxInstances", high)
    initial = reader.integer("sagemakerIcInitialInstances", minimum=1)
    check_capacity("sagemakerIcInitialInstances", initial, "sagemakerIcMaxInstances", high)
    return IcScaling(
        initial_instances=initial,
        min_instances=low,
        max_instances=high,
        concurrent_requests_per_copy=reader.integer(
            "sagemakerIcConcurrentRequestsPerCopy", minimum=1
        ),
        scale_in_cooldown=reader.integer("sagemakerScaleInCooldownSeconds", minimum=0),
        scale_out_cooldown=reader.integer("sagemakerScaleOutCooldownSeconds", minimum=0),
    )


def _copies(reader: ConfigReader) -> tuple[list[CopyRequest], AwaitingRelease | None]:
    """The copies to serve, read from the release the stack names; until it is published,
    the listed copies (checked, never declared) and where the release goes."""
    declared = declared_copies(reader.string(MODELS_KEY))
    key, url = renamed(reader, RELEASE_URL, OLD_RELEASE_KEY, "release")
    if url is None:  # the stack creates the bucket: nothing can be published in it yet
        return declared, AwaitingRelease(None, "")
    if not published(url, key):
        return declared, AwaitingRelease(url, key)
    released = manifest_copies(url, key, listed=bool(declared))
    return (with_manifest(declared, released) if declared else released), None


def _refuse_engine(request: CopyRequest, target: str) -> None:
    """A copy running an LLM engine cannot run on the SageMaker Triton images (TDK916)."""
    if request.engine:
        raise ConfigError(
            f"{request.where}: {request.copy} runs the {request.engine} engine; the {target} "
            f"target cannot serve it: {NO_ENGINE_IMAGE}",
            hint="deploy the release's LLM copies with a gke or eks stack (the kit picks the "
            "Triton image flavour that carries the engine), and list the other copies in "
            f"{qualify(MODELS_KEY)}",
        )


def _components(
    reader: ConfigReader, instance: IcInstance, version: str, target: str
) -> tuple[tuple[ComponentSpec, ...], AwaitingRelease | None]:
    copies, awaiting = _copies(reader)
    for request in copies:
        _refuse_engine(request, target)
        if request.decoupled:
            check_generate_image(request.where, request.copy, version)
    names = check_component_names(qualify(MODELS_KEY), [c.copy for c in copies])
    stack = {
        "accelerators": reader.integer("sagemakerIcAccelerators", minimum=0),
        "memoryMb": reader.integer("sagemakerIcMemoryMb", minimum=0),
        "cpuCores": reader.number("sagemakerIcCpuCores", minimum=0.25),
        "minCopies": reader.integer("sagemakerIcMinCopies", minimum=0),
        "maxCopies": reader.integer("sagemakerIcMaxCopies", minimum=1),
        "initialCopies": reader.integer("sagemakerIcInitialCopies", minimum=1),
    }
    specs = []
    for request in copies:
        value = {**stack, **request.overrides}
        low, high = int(value["minCopies"]), int(value["maxCopies"])
        initial = int(value["initialCopies"])
        if not (low <= initial <= high and initial >= 1):
            raise ConfigError(
                f"{request.where}: copies must satisfy minCopies ({low}) <= initialCopies "
                f"({initial}) <= maxCopies ({high}), initialCopies >= 1 (a component is created "
                "with at least one copy; minCopies 0 is reached by scaling in)",
                hint="fix sagemakerIcMinCopies / InitialCopies / MaxCopies or the group's",
            )
        needs = requirements(
            request.where, request.size_bytes, instance, int(value["accelerators"]),
            int(value["memoryMb"]), float(value["cpuCores"]),
        )  # fmt: skip
        specs.append(
            ComponentSpec(request.copy, names[request.copy], request.size_bytes, needs,
                          low, high, initial, request.decoupled)
        )  # fmt: skip
    return tuple(specs), awaiting


class SageMakerIcDoctor(DoctorPort[SageMakerIcConfig]):
    """What ``tdk doctor`` checks of a SageMaker inference components stack."""

    def facts(self, config: SageMakerIcConfig, today: dt.date) -> list[Finding]:
        from infra.clouds.aws.sagemaker import doctor

        return doctor.findings(config.triton_version, config.inference_ami_version, today)


class SageMakerIcTarget(Target[SageMakerIcConfig]):
    """SageMaker inference components running the SageMaker Triton image, one per copy."""

    derived_names = DERIVED
    release_schemes: ClassVar[tuple[str, ...]] = ("s3",)
    doctor = SageMakerIcDoctor()
    build = Refused(
        "a SageMaker endpoint runs no build jobs; build on its instance type (docs/build.md)"
    )
    render = Refused(
        "SageMaker runs the Triton containers itself; there is no cluster to apply manifests to"
    )

    def refusals(self) -> Iterable[Refusal]:
        reason = "AWS Inferentia/Trainium accelerators cannot run the Triton GPU image"
        for family in ("inf1", "inf2", "trn1", "trn1n", "trn2"):
            yield Refusal(INSTANCE_KEY, f"ml.{family}.*", reason, SUGGESTED_INSTANCE)

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> SageMakerIcConfig:
        region = reader.string("aws:region")
        version = read_triton_version(reader, region)
        instance = ic_instance(INSTANCE_KEY, reader.string(INSTANCE_KEY))
        components, awaiting = _components(reader, instance, version, common.target)
        return SageMakerIcConfig(
            common=common,
            region=region,
            instance=instance,
            triton_version=version,
            inference_ami_version=inference_ami_version(reader, version),
            environment=container_environment(_knobs(reader)),
            components=components,
            scaling=_scaling(reader),
            startup=Startup(
                download_timeout=reader.integer(
                    "sagemakerIcModelDownloadTimeoutSeconds", minimum=60, maximum=3600
                ),
                health_check_timeout=reader.integer(
                    "sagemakerIcStartupHealthCheckTimeoutSeconds", minimum=60, maximum=3600
                ),
            ),
            rolling=Rolling(
                batch_percent=reader.integer(
                    "sagemakerIcRollingBatchPercent",
                    minimum=ROLLING_PERCENT[0],
                    maximum=ROLLING_PERCENT[1],
                ),
                wait_seconds=reader.integer(
                    "sagemakerIcRollingWaitSeconds", minimum=0, maximum=3600
                ),
            ),
            thresholds=IcThresholds(
                latency_slo_ms=reader.integer("sagemakerLatencySloMs", minimum=1),
                error_rate_percent=reader.integer(
                    "sagemakerErrorRatePercent", minimum=0, maximum=100
                ),
            ),
            alarm_email=alarm_email(reader),
            created_release_prefix=created_release_prefix(reader),
            budget=read_budget(reader, email_required=True),
            log_retention_days=read_log_retention(reader),
            awaiting=awaiting,
        )

    def offer(self, config: SageMakerIcConfig) -> TargetSpec:
        """One instance of the endpoint; each component's copy runs its own Triton on the
        accelerators it reserves, so models never share a GPU."""
        return instance_spec(
            config.common.target, config.instance.instance_type, config.triton_version,
            prefix="ml.", shares_gpus=False,
        )  # fmt: skip

    def capacity(self, config: SageMakerIcConfig) -> Iterable[Shortfall]:
        """Every component's copies at creation (a copy SageMaker cannot place fails the
        create) and at their maximum (copies beyond the fleet wait), against the most
        instances managed instance scaling may run."""
        most = config.scaling.max_instances
        for when, copies, blocking in (
            ("at creation (initialCopies)", lambda c: c.initial_copies, True),
            ("at the configured maximum (maxCopies)", lambda c: c.max_copies, False),
        ):
            demands = [(c.needs, copies(c)) for c in config.components]
            need = instances_needed(demands, config.instance)
            if need > most:
                yield Shortfall(
                    "sagemakerIcMaxInstances",
                    f"{when}: {describe_demand(demands, config.instance)}, which takes "
                    f"{need} instances; sagemakerIcMaxInstances allows {most}",
                    f"set sagemakerIcMaxInstances to at least {need}, pick an instance type "
                    "with more GPUs, or serve fewer copies (sagemakerIcModels)",
                    blocking,
                )

    def declare(self, config: SageMakerIcConfig) -> Mapping[str, Any]:
        from infra.targets.sagemaker_ic.stack import declare_stack

        return declare_stack(config)


TARGET = SageMakerIcTarget()
