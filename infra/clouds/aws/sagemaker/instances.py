"""Where SageMaker MME can run Triton: instance types and regions, as data with reasons.

SageMaker multi-model endpoints run the Triton image on single-GPU instances and on CPU
instances (AWS "Supported algorithms, frameworks, and instances for multi-model endpoints").
The image itself, and the regions it is published in, come from the SageMaker SDK's image
registry (``sagemaker-tritonserver``), never from a hand-written account table. Pure and
offline: nothing here calls AWS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws.sagemaker import images
from infra.config import ConfigReader, check_choice, qualify
from infra.facts import hardware as facts
from infra.facts import triton as tf
from tdk.errors import ConfigError

#: Why no SageMaker target runs an LLM engine: the SageMaker Triton images are only the
#: ``<yy.mm>-py3`` tags (sagemaker-core 2.27 ``image_uri_config/sagemaker-tritonserver.json``
#: lists 23.12 ... 26.05, each ``-py3``, none vllm or trtllm; checked 2026-11-27), and the
#: ``-py3`` image has neither the ``vllm`` nor the ``tensorrtllm`` backend nor the
#: ``tensorrt_llm`` Python package the LLM-API model imports (infra/facts/llm.py FLAVOURS)
NO_ENGINE_IMAGE = (
    "the SageMaker Triton images are the -py3 tags only (sagemaker-core's "
    "sagemaker-tritonserver.json lists no vllm or trtllm flavour), which carry neither the "
    "vllm nor the tensorrtllm backend, nor TensorRT-LLM's Python package"
)

#: Why no decoupled (streaming) model runs on a SageMaker multi-model endpoint, from both sides:
#: Triton's SageMaker MME invoke path refuses decoupled models before inferring
#: (``SagemakerAPIServer::SageMakerMMEHandleInfer``, TRITONSERVER_TXN_DECOUPLED), source:
#: https://github.com/triton-inference-server/server/blob/main/src/sagemaker_server.cc
#: (checked 2026-11-26); and SageMaker's streaming call, InvokeEndpointWithResponseStream, has
#: no ``TargetModel`` (the parameter that addresses a model of an MME, AWS "Invoke a
#: Multi-Model Endpoint": https://docs.aws.amazon.com/sagemaker/latest/dg/invoke-multi-model-endpoint.html;
#: botocore 1.44.8 ``data/sagemaker-runtime/2017-05-13/service-2.json``, whose
#: InvokeEndpointWithResponseStreamInput lists no TargetModel; checked 2026-11-27)
MME_DECOUPLED = (
    "Triton's SageMaker multi-model front refuses them: \"HTTP end point doesn't support "
    'models with decoupled transaction policy" (triton-inference-server/server '
    "src/sagemaker_server.cc), and SageMaker's streaming call "
    "(InvokeEndpointWithResponseStream) takes no TargetModel, so no MME model can stream"
)

FRAMEWORK = tf.SAGEMAKER_FRAMEWORK
#: SageMaker's instance types are EC2's with this prefix (``ml.g5.xlarge``)
PREFIX = "ml."

#: GPU families SageMaker lists for multi-model endpoints: size -> number of GPUs
GPU_FAMILIES: dict[str, dict[str, int]] = {
    family: dict(aws_catalog.EC2_GPU_FAMILIES[family].gpus) for family in ("g4dn", "g5", "p3")
}  # GPUs per size, from the one table of target facts

#: x86-64 CPU families (multi-model endpoints support every CPU instance type)
CPU_FAMILIES: tuple[str, ...] = (
    "t2", "t3", "m4", "m5", "m5d", "m6i", "m7i",
    "c4", "c5", "c5d", "c6i", "c7i", "r5", "r5d", "r6i", "r7i",
)  # fmt: skip

#: families that exist on SageMaker but cannot host this image as an MME, and why
REFUSED_FAMILIES: dict[str, str] = {
    "p2": "NVIDIA K80 GPUs are too old for current Triton images",
    **{
        f: "not a GPU instance SageMaker supports for multi-model endpoints"
        for f in (
            "g6",
            "g6e",
            "g7",
            "g7e",
            "g4ad",
            "p4d",
            "p4de",
            "p5",
            "p5e",
            "p5en",
            "p6-b200",
            "p6-b300",
            "p6e-gb200",
        )
    },
    **{
        f: "AWS Inferentia/Trainium accelerators cannot run the Triton GPU or CPU image"
        for f in ("inf1", "inf2", "trn1", "trn1n")
    },
    **{
        f: "Graviton (arm64) instances cannot run the x86-64 Triton image"
        for f in ("c6g", "c6gn", "c7g", "m6g", "m7g", "r6g", "r7g", "t4g")
    },
}

_TYPE = re.compile(r"^ml\.([a-z0-9]+)\.([a-z0-9]+)$")
_CPU_SIZE = re.compile(r"^(medium|large|xlarge|[0-9]+xlarge)$")


@dataclass(frozen=True)
class InstanceKind:
    """What an accepted instance type is: ``gpu`` or ``cpu``, and its GPU count."""

    instance_type: str
    processor: str
    gpus: int


def single_gpu_types() -> list[str]:
    """Every GPU instance type Triton MME accepts, for error messages and docs."""
    return [
        f"ml.{family}.{size}"
        for family, sizes in GPU_FAMILIES.items()
        for size, gpus in sizes.items()
        if gpus == 1
    ]


def valid_choices() -> list[str]:
    return [*single_gpu_types(), f"x86 CPU types ml.<{'|'.join(CPU_FAMILIES)}>.<size>"]


def classify_instance(key: str, instance_type: str) -> InstanceKind:
    """Accept a single-GPU or x86 CPU type; anything else is a ConfigError listing the choices.

    Refused types (multi-GPU, Inferentia, Graviton...) never get here: the target's
    ``refusals()`` are enforced first, by the Target base class, with their reasons.
    """
    match = _TYPE.match(instance_type)
    family, size = match.groups() if match else ("", "")
    if GPU_FAMILIES.get(family, {}).get(size) == 1:
        return InstanceKind(instance_type, "gpu", 1)
    if family in CPU_FAMILIES and _CPU_SIZE.match(size):
        return InstanceKind(instance_type, "cpu", 0)
    check_choice(key, instance_type, valid_choices(), why="unknown instance type")
    raise AssertionError("unreachable: check_choice raised")  # pragma: no cover


def image_versions() -> list[str]:
    """Triton image versions the installed SageMaker SDK knows."""
    return list(tf.sagemaker_images()["versions"])


def image_regions(version: str) -> list[str]:
    """Regions where the SageMaker Triton image ``version`` is published."""
    return sorted(tf.sagemaker_images()["versions"][version]["registries"])


def check_image(version_key: str, version: str, region_key: str, region: str) -> None:
    """The version must be known and published in the region; errors list the choices."""
    check_choice(version_key, version, image_versions(), why="unknown Triton image version")
    check_choice(region_key, region, image_regions(version), why=f"no Triton {version} image there")


def read_triton_version(reader: ConfigReader, region: str) -> str:
    """``sagemakerTritonVersion``; empty: the newest image the installed sagemaker-core lists."""
    key = "sagemakerTritonVersion"
    version = reader.optional_string(key) or tf.default_sagemaker_triton_version()
    check_image(key, version, "aws:region", region)
    return version


def gpu_of(instance_type: str) -> facts.Gpu | None:
    """The GPU of an ``ml.<family>.<size>`` type (None for CPU types)."""
    offer = aws_catalog.EC2_GPU_FAMILIES.get(aws_catalog.ec2_family(instance_type, PREFIX)[0])
    return facts.GPUS[offer.gpu] if offer else None


def host_ami(reader: ConfigReader, ami_key: str, version: str, instance_key: str) -> str | None:
    """The InferenceAmiVersion the image needs on a GPU instance (None on CPU instances).

    Refuses a GPU below the image's compute capability and an AMI pin whose CUDA major is
    not the image's; an empty pin derives the AMI from the image's CUDA.
    """
    instance_type = reader.string(instance_key)
    gpu = gpu_of(instance_type)
    if gpu is None:
        return None
    tf.check_compute(qualify(instance_key), instance_type, gpu, version)
    ami = reader.optional_string(ami_key) or images.ami_version_for(version)
    images.check_ami(qualify(ami_key), version, ami)
    return ami


def triton_image(region: str, version: str, kind: InstanceKind) -> str:
    """The ECR URI of the SageMaker Triton image for this region, version and processor."""
    from sagemaker.core import image_uris

    try:
        uri: str = image_uris.retrieve(
            FRAMEWORK, region=region, version=version, instance_type=kind.instance_type
        )
    except ValueError as exc:
        raise ConfigError(
            f"no SageMaker Triton image for {region} {version} {kind.instance_type}: {exc}",
            hint=f"pick another {qualify('sagemakerTritonVersion')} or region",
        ) from exc
    return uri
