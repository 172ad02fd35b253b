"""Which Triton image to run and what host it needs: SageMaker image versions (read at runtime
from the installed sagemaker-core), the InferenceAmiVersion each image's CUDA needs, its age."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.facts import INFRA_EXTRA_INSTALL, Source
from infra.facts import hardware as facts
from tdk.errors import ConfigError

#: sagemaker-core ships the image registry as data; we read it, never transcribe it (found
#: without importing sagemaker, which would pull boto3 into ``tdk validate``)
SAGEMAKER_FRAMEWORK = "sagemaker-tritonserver"
SAGEMAKER_IMAGES_FILE = f"core/image_uri_config/{SAGEMAKER_FRAMEWORK}.json"
AMI_SOURCE = Source(
    "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html"
)
TRITON_SOURCE = Source(
    facts.TRITON_RELEASE_NOTES, dt.date.fromisoformat(facts.TRITON_FACTS_CHECKED)
)
#: an image older than this (months) is reported by doctor and refused as a Kubernetes default
MAX_IMAGE_AGE_MONTHS = 12
NGC_REPOSITORY = "nvcr.io/nvidia/tritonserver"


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


def _key(version: str) -> tuple[int, int]:
    year, month = version.split(".")[:2]
    return int(year), int(month)


def sagemaker_images() -> dict[str, Any]:
    """sagemaker-core's Triton image registry, read as the data file it is (what
    ``image_uris.config_for_framework`` loads): importing ``sagemaker.core`` loads boto3, and
    ``tdk validate`` parses stacks without a cloud SDK."""
    spec = importlib.util.find_spec("sagemaker")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "sagemaker-core is not installed: tdk reads the Triton image list from it",
            hint=f"{INFRA_EXTRA_INSTALL}: sagemaker-core is in the kit's infra extra, which "
            "`make demo` does not install",
        )
    path = Path(spec.submodule_search_locations[0]) / SAGEMAKER_IMAGES_FILE
    config: dict[str, Any] = json.loads(path.read_text())
    return config


def sagemaker_image_versions() -> list[str]:
    """Triton image versions the installed sagemaker-core lists, oldest first."""
    return sorted(sagemaker_images()["versions"], key=_key)


def default_sagemaker_triton_version() -> str:
    """The newest SageMaker Triton image the installed sagemaker-core lists."""
    return sagemaker_image_versions()[-1]


def image_facts(version: str) -> facts.Image:
    """The table row of a Triton release; ConfigError naming the table when it has none."""
    found = facts.IMAGES.get(facts.image_version(version))
    if found is None:
        raise ConfigError(
            f"Triton {version} is not a release in the kit's image facts ({TRITON_SOURCE.url}): "
            "NVIDIA has not published it, or the kit predates it",
            hint=f"use one of {', '.join(sorted(facts.IMAGES))}, or add its row to "
            "infra/facts/hardware.py from its release notes",
        )
    return found


def ami_version_for(version: str) -> str:
    """The newest InferenceAmiVersion whose CUDA major matches the image's."""
    major = image_facts(version).cuda[0]
    return [a for a in INFERENCE_AMIS if a.cuda[0] == major][-1].name


def check_ami(key: str, version: str, ami: str) -> None:
    """Refuse an AMI whose CUDA major differs from the image's (the container cannot start)."""
    row = AMI_BY_NAME.get(ami)
    image = image_facts(version)
    if row is None or row.cuda[0] != image.cuda[0]:
        fit = ami_version_for(version)
        raise ConfigError(
            f"{key} {ami!r} does not fit Triton {version} (CUDA {image.cuda[0]}.{image.cuda[1]}): "
            f"the AMI's driver must serve CUDA {image.cuda[0]} ({AMI_SOURCE.url}, checked "
            f"{AMI_SOURCE.checked})",
            hint=f"remove the key to derive it, or `pulumi config set {key} {fit}`",
        )


def check_compute(key: str, instance: str, gpu: facts.Gpu | None, version: str) -> None:
    """Refuse a GPU below the image's minimum compute capability (V100 with 25.x)."""
    need = image_facts(version).min_compute
    if gpu is not None and gpu.compute < need:
        have = ".".join(map(str, gpu.compute))
        raise ConfigError(
            f"{key} {instance} ({gpu.kind}, compute capability {have}) cannot run Triton "
            f"{version}: it needs compute capability {need[0]}.{need[1]} or later "
            f"({TRITON_SOURCE.url}, checked {TRITON_SOURCE.checked})",
            hint="pick a T4/A10G/L4 instance (ml.g4dn, ml.g5) or a Triton image before 25.01",
        )


def released(version: str) -> dt.date:
    """First day of the image's month (NGC publishes yy.mm late that month: age rounds up)."""
    year, month = _key(facts.image_version(version))
    return dt.date(2000 + year, month, 1)


def age_months(version: str, today: dt.date) -> int:
    """Whole months between the image's month and ``today``."""
    start = released(version)
    return (today.year - start.year) * 12 + today.month - start.month


def default_kubernetes_triton_image() -> str:
    """The NGC tag matching the SageMaker default (same release)."""
    return f"{NGC_REPOSITORY}:{default_sagemaker_triton_version()}-py3"


def default_checked_image() -> str:
    """The image ``tdk validate --target`` checks against when none is named: the one the
    stacks deploy (the newest sagemaker-core lists), never an older one that has more facts."""
    return default_sagemaker_triton_version()
