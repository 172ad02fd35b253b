"""The host a SageMaker Triton image needs: the ``InferenceAmiVersion`` (NVIDIA driver branch and
CUDA) of each GPU AMI SageMaker offers, the one an image's CUDA major needs, and the refusal of a
pinned AMI that cannot start it. The images themselves come from the installed sagemaker-core
(``infra.facts.triton``: the kit's default release for every target is the newest it lists)."""

from __future__ import annotations

from dataclasses import dataclass

from infra.facts import Source
from infra.facts import triton as tf
from tdk.errors import ConfigError

AMI_SOURCE = Source(
    "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html"
)


@dataclass(frozen=True)
class InferenceAmi:
    """A SageMaker ``InferenceAmiVersion``: its NVIDIA driver branch and CUDA version."""

    name: str
    driver: int
    cuda: tuple[int, int]


#: newest last; the names are the botocore enum (infra/clouds/aws/generated.json checks them)
INFERENCE_AMIS: tuple[InferenceAmi, ...] = (
    InferenceAmi("al2-ami-sagemaker-inference-gpu-2", 535, (12, 2)),
    InferenceAmi("al2-ami-sagemaker-inference-gpu-2-1", 535, (12, 2)),
    InferenceAmi("al2-ami-sagemaker-inference-gpu-3-1", 550, (12, 4)),
    InferenceAmi("al2023-ami-sagemaker-inference-gpu-4-1", 580, (13, 0)),
)
AMI_BY_NAME = {a.name: a for a in INFERENCE_AMIS}


def ami_version_for(version: str) -> str:
    """The newest InferenceAmiVersion whose CUDA major matches the image's."""
    major = tf.image_facts(version).cuda[0]
    return [a for a in INFERENCE_AMIS if a.cuda[0] == major][-1].name


def check_ami(key: str, version: str, ami: str) -> None:
    """Refuse an AMI whose CUDA major differs from the image's (the container cannot start)."""
    row = AMI_BY_NAME.get(ami)
    image = tf.image_facts(version)
    if row is None or row.cuda[0] != image.cuda[0]:
        fit = ami_version_for(version)
        raise ConfigError(
            f"{key} {ami!r} does not fit Triton {version} (CUDA {image.cuda[0]}.{image.cuda[1]}): "
            f"the AMI's driver must serve CUDA {image.cuda[0]} ({AMI_SOURCE.url}, checked "
            f"{AMI_SOURCE.checked})",
            hint=f"remove the key to derive it, or `pulumi config set {key} {fit}`",
        )
