"""LLM serving facts: which Triton image flavour carries which engine, the engine version each
release ships, and the multi-GPU node shapes tensor-parallel models need. Each table names its
source; all were checked 2026-11-26."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from infra.facts import Source
from tdk.errors import ConfigError

LLM_CHECKED = dt.date(2026, 11, 26)
#: NVIDIA's Triton release compatibility matrix (the trtllm-python-py3 table)
COMPATIBILITY = Source(
    "https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/introduction/"
    "compatibility.html",
    LLM_CHECKED,
)
#: the vllm_backend README: ``tritonserver:<yy.mm>-vllm-python-py3`` from 23.10 on
VLLM_BACKEND = Source("https://github.com/triton-inference-server/vllm_backend", LLM_CHECKED)
#: Triton 24.12 release notes (archived): "TensorRT-LLM version release/0.15.0, vLLM 0.5.5"
RELEASE_24_12 = Source(
    "https://docs.nvidia.com/deeplearning/triton-inference-server/archives/"
    "triton-inference-server-2530/user-guide/docs/introduction/release_notes.html",
    LLM_CHECKED,
)
#: GPUs per G2 machine type (Compute Engine accelerator-optimized machines)
GCE_G2 = Source(
    "https://cloud.google.com/compute/docs/accelerator-optimized-machines#g2-vms", LLM_CHECKED
)

#: engine -> the NGC tag suffix of the Triton image that carries it (``<yy.mm>-<suffix>``)
FLAVOURS: dict[str, str] = {"vllm": "vllm-python-py3", "tensorrt_llm": "trtllm-python-py3"}
#: the Triton backend each flavour adds to the base image's (``backend: "vllm"``, the
#: TensorRT-LLM C++ backend ``backend: "tensorrtllm"``); the LLM-API model runs on python
FLAVOUR_BACKENDS: dict[str, frozenset[str]] = {
    "vllm-python-py3": frozenset({"vllm"}),
    "trtllm-python-py3": frozenset({"tensorrtllm"}),
}
#: the default image's suffix (no engine)
BASE_FLAVOUR = "py3"
#: the first release of each flavour (vllm_backend README; TensorRT-LLM backend images 23.10)
FIRST_RELEASE: dict[str, str] = {"vllm": "23.10", "tensorrt_llm": "23.10"}

#: TensorRT-LLM version in ``<yy.mm>-trtllm-python-py3`` (COMPATIBILITY)
TRTLLM_VERSIONS: dict[str, str] = {
    "24.05": "0.9.0", "24.06": "0.10.0", "24.07": "0.11.0", "24.08": "0.12.0",
    "24.09": "0.13.0", "24.10": "0.14.0", "24.11": "0.15.0", "24.12": "0.16.0",
    "25.01": "0.17.0", "25.06": "0.20.0", "25.07": "0.20.0", "25.08": "0.21.0",
    "25.09": "1.0.0", "25.10": "1.0.0", "25.11": "1.0.3", "25.12": "1.1.0",
}  # fmt: skip
#: Triton's build.py at a release tag: ``DEFAULT_TRITON_VERSION_MAP`` pairs the release's
#: ``triton_container_version`` (the NGC ``yy.mm``) with the ``vllm_version`` its build installs
#: (``pip3 install vllm==<vllm_version>`` for the vllm image); checked at each tag 2026-11-26.
#: From v2.69.0 (26.05) on the map no longer names a vLLM version: those releases are unknown.
TRITON_BUILD_PY = "https://github.com/triton-inference-server/server/blob/{tag}/build.py"


@dataclass(frozen=True)
class VllmRow:
    """The vLLM version one ``<yy.mm>-vllm-python-py3`` image ships, and where it was read."""

    vllm: str
    tag: str  # the Triton server tag whose build.py says so
    checked: dt.date = LLM_CHECKED

    @property
    def source(self) -> str:
        return TRITON_BUILD_PY.format(tag=self.tag)


#: ``yy.mm`` -> the vLLM in ``<yy.mm>-vllm-python-py3`` (24.12 = 0.5.5 agrees with RELEASE_24_12;
#: 25.01's build.py is a "25.01dev" map at v2.54.0)
VLLM_ROWS: dict[str, VllmRow] = {
    "24.12": VllmRow("0.5.5", "v2.53.0"), "25.01": VllmRow("0.6.3.post1", "v2.54.0"),
    "25.02": VllmRow("0.7.0", "v2.55.0"), "25.03": VllmRow("0.7.3", "v2.56.0"),
    "25.04": VllmRow("0.8.1", "v2.57.0"), "25.05": VllmRow("0.8.4", "v2.58.0"),
    "25.06": VllmRow("0.9.0.1", "v2.59.0"), "25.07": VllmRow("0.9.0.1", "v2.59.1"),
    "25.08": VllmRow("0.9.2", "v2.60.0"), "25.09": VllmRow("0.10.1.1", "v2.61.0"),
    "25.10": VllmRow("0.10.2", "v2.62.0"), "25.11": VllmRow("0.11.0", "v2.63.0"),
    "25.12": VllmRow("0.11.1", "v2.64.0"), "26.01": VllmRow("0.13.0", "v2.65.0"),
    "26.02": VllmRow("0.15.1", "v2.66.0"), "26.03": VllmRow("0.16.0", "v2.67.0"),
    "26.04": VllmRow("0.19.0", "v2.68.0"),
}  # fmt: skip
#: vLLM version in ``<yy.mm>-vllm-python-py3`` where a checked source states it
VLLM_VERSIONS: dict[str, str] = {release: row.vllm for release, row in VLLM_ROWS.items()}


def vllm_version(image_or_release: str) -> str | None:
    """The vLLM the vllm image of this release ships (``"25.09"`` or an image tag); None where
    no checked source says."""
    release = release_of(image_or_release) or image_or_release
    return VLLM_VERSIONS.get(release)


#: GKE G2 machine type -> L4 GPUs (GCE_G2); EC2 multi-GPU sizes are in hardware.EC2_GPU_FAMILIES
#: (g6e.12xlarge: 4 L40S, g5.12xlarge: 4 A10G, g6.12xlarge: 4 L4)
G2_MACHINE_GPUS: dict[str, int] = {
    "g2-standard-4": 1, "g2-standard-8": 1, "g2-standard-12": 1, "g2-standard-16": 1,
    "g2-standard-32": 1, "g2-standard-24": 2, "g2-standard-48": 4, "g2-standard-96": 8,
}  # fmt: skip

#: kit choices (not external facts): /dev/shm per GPU of an LLM pod (NCCL and the engines'
#: worker processes exchange tensors there; Docker's 64 MiB default is far too small), its
#: floor, and the startup budget of a pod that loads (or downloads) an LLM's weights
SHM_GIB_PER_GPU = 2
SHM_GIB_MIN = 2
LLM_STARTUP_BUDGET_SECONDS = 1800
#: where the engines' Hugging Face downloads go (HF_HOME); a persistent claim mounts here
WEIGHT_CACHE_PATH = "/cache/huggingface"


def engine_image(base_image: str, engine: str) -> str:
    """``<repo>:<yy.mm>-py3`` -> ``<repo>:<yy.mm>-<engine flavour>`` (the same release)."""
    repo, _, tag = base_image.rpartition(":")
    release = tag.split("-", 1)[0]
    if not repo or not release:
        return base_image
    return f"{repo}:{release}-{FLAVOURS[engine]}"


def serving_image(image: str, engines: Iterable[str], key: str = "the Triton image") -> str:
    """The one engine-image decision (validate, render, plan, doctor and the Pulumi program
    all ask it): ``image`` when the models run no engine or it already is the engine's
    flavour; else the same NGC release in the flavour that carries the engine. A custom image
    (no ``yy.mm`` tag) is the user's choice, kept as is; two engines, or a release before the
    flavour's first, are ConfigErrors naming ``key``."""
    wanted = sorted(set(engines) - {""})
    if not wanted:
        return image
    if len(wanted) > 1:
        raise ConfigError(
            f"the release mixes LLM engines ({', '.join(wanted)}); each ships in its own "
            "Triton image flavour, so one Triton cannot serve both",
            hint="package and deploy the vLLM and TensorRT-LLM models as separate releases/stacks",
        )
    engine = wanted[0]
    release = release_of(image)
    if not release or image.endswith(FLAVOURS[engine]):
        return image
    first = FIRST_RELEASE[engine]
    if release_key(release) < release_key(first):
        raise ConfigError(
            f"{key} is Triton {release}; the {FLAVOURS[engine]} flavour starts at {first} "
            f"({VLLM_BACKEND.url}, checked {VLLM_BACKEND.checked})",
            hint=f"set {key} to a release from {first} on, or leave it empty for the default",
        )
    return engine_image(image, engine)


def image_backends(image: str, base: frozenset[str]) -> frozenset[str]:
    """The backends ``image`` serves: its release's base backends plus what its flavour adds."""
    return base | flavour_backends(image)


def release_of(image: str) -> str:
    """The ``yy.mm`` of an NGC Triton image tag ("" when the tag has none)."""
    tag = image.rpartition(":")[2]
    release = tag.split("-", 1)[0]
    return release if release.count(".") == 1 else ""


def flavour_backends(image: str) -> frozenset[str]:
    """The backends an image's flavour adds (none for the base ``-py3`` image), for the
    targets' backend-in-image check."""
    flavour = image.rpartition(":")[2].partition("-")[2]
    return FLAVOUR_BACKENDS.get(flavour, frozenset())


def release_key(release: str) -> tuple[int, int]:
    """``"25.09"`` -> ``(25, 9)``, for ordering releases."""
    year, month = release.split(".")[:2]
    return int(year), int(month)


def smallest_g2(gpus: int) -> str | None:
    """The smallest G2 machine type with at least ``gpus`` L4s, None above 8."""
    fits = [(n, m) for m, n in G2_MACHINE_GPUS.items() if n >= gpus]
    return min(fits)[1] if fits else None
