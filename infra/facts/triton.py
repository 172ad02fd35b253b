"""Which Triton image to run: the facts of a release (``image_facts``), the GPU it needs, its age,
and the kit's default release, the newest that the installed sagemaker-core lists as a SageMaker
image (read at runtime, never transcribed), so one release validated once runs on every target
alike. The default stays here, below the clouds, because the values every target reads
(``infra.values.offer``), the Kubernetes layer's default image and ``tdk doctor`` need it; what is
SageMaker hosting's alone (the InferenceAmiVersion each image's CUDA needs) is AWS's:
``infra/clouds/aws/sagemaker/images.py``."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path
from typing import Any

from infra.facts import INFRA_EXTRA_INSTALL, Source
from infra.facts import hardware as facts
from tdk.errors import ConfigError

#: sagemaker-core ships the image registry as data; we read it, never transcribe it (found
#: without importing sagemaker, which would pull boto3 into ``tdk validate``)
SAGEMAKER_FRAMEWORK = "sagemaker-tritonserver"
SAGEMAKER_IMAGES_FILE = f"core/image_uri_config/{SAGEMAKER_FRAMEWORK}.json"
TRITON_SOURCE = Source(
    facts.TRITON_RELEASE_NOTES, dt.date.fromisoformat(facts.TRITON_FACTS_CHECKED)
)
#: an image older than this (months) is reported by doctor and refused as a Kubernetes default
MAX_IMAGE_AGE_MONTHS = 12
NGC_REPOSITORY = "nvcr.io/nvidia/tritonserver"


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
