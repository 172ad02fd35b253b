"""LLM serving facts: which Triton image flavour carries which engine, the engine version each
release ships, and the multi-GPU node shapes tensor-parallel models need. Each table names its
source; all were checked 2026-11-26."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

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

#: engine -> the NGC tag suffix of the Triton image that carries it (``<yy.mm>-<suffix>``)
FLAVOURS: dict[str, str] = {"vllm": "vllm-python-py3", "tensorrt_llm": "trtllm-python-py3"}
#: the Triton backend each flavour adds to the base image's (``backend: "vllm"``, the
#: TensorRT-LLM C++ backend ``backend: "tensorrtllm"``); the LLM-API model runs on python
FLAVOUR_BACKENDS: dict[str, frozenset[str]] = {
    "vllm-python-py3": frozenset({"vllm"}),
    "trtllm-python-py3": frozenset({"tensorrtllm"}),
}
#: the first release of each flavour (vllm_backend README; TensorRT-LLM backend images 23.10)
FIRST_RELEASE: dict[str, str] = {"vllm": "23.10", "tensorrt_llm": "23.10"}

#: NVIDIA's release compatibility matrix as committed in triton-inference-server/server
#: ``docs/introduction/compatibility.md`` (commit 0f963c9a8c69, read 2026-11-27): the
#: TensorRT-LLM of every ``<yy.mm>-trtllm-python-py3`` and the vLLM of every
#: ``<yy.mm>-vllm-python-py3`` image, 24.04 on. The vLLM column gives NVIDIA's builds
#: (``0.19.0+6bc3197f.nv26.04...``): the upstream release is the part before ``+``.
MATRIX = Source(
    "https://github.com/triton-inference-server/server/blob/0f963c9a8c6913aa4cd9b57ee04f9c2b76ee8d2a/"
    "docs/introduction/compatibility.md",
    dt.date(2026, 11, 27),
)
#: TensorRT-LLM version in ``<yy.mm>-trtllm-python-py3`` (MATRIX)
TRTLLM_VERSIONS: dict[str, str] = {
    "24.04": "0.9.0", "24.05": "0.9.0", "24.06": "0.10.0", "24.07": "0.11.0",
    "24.08": "0.12.0", "24.09": "0.13.0", "24.10": "0.14.0", "24.11": "0.15.0",
    "24.12": "0.16.0", "25.01": "0.17.0", "25.02": "0.17.0.post1", "25.03": "0.18.0",
    "25.04": "0.18.2", "25.05": "0.19.0", "25.06": "0.20.0", "25.07": "0.20.0",
    "25.08": "0.21.0", "25.09": "1.0.0", "25.10": "1.0.0", "25.11": "1.0.3.2510",
    "25.12": "1.1.0", "26.01": "1.1.0", "26.02": "1.1.0", "26.03": "1.2.0",
    "26.04": "1.2.1", "26.05": "1.2.1", "26.06": "1.2.1", "26.07": "1.2.1",
}  # fmt: skip
#: vLLM version (upstream release) in ``<yy.mm>-vllm-python-py3`` (MATRIX). 25.06 and 25.07
#: ship NVIDIA's build of 0.9.0rc1 (Triton's build.py at v2.59.0 had said 0.9.0.1).
VLLM_VERSIONS: dict[str, str] = {
    "24.04": "0.4.0.post1", "24.05": "0.4.0.post1", "24.06": "0.4.3", "24.07": "0.5.0.post1",
    "24.08": "0.5.0.post1", "24.09": "0.5.3.post1", "24.10": "0.5.5", "24.11": "0.5.5",
    "24.12": "0.5.5", "25.01": "0.6.3.post1", "25.02": "0.7.0", "25.03": "0.7.3",
    "25.04": "0.8.1", "25.05": "0.8.4", "25.06": "0.9.0rc1", "25.07": "0.9.0rc1",
    "25.08": "0.9.2", "25.09": "0.10.1.1", "25.10": "0.10.2", "25.11": "0.11.0",
    "25.12": "0.11.1", "26.01": "0.13.0", "26.02": "0.15.1", "26.03": "0.17.1",
    "26.04": "0.19.0", "26.05": "0.19.0", "26.06": "0.22.1", "26.07": "0.24.0",
    "26.08": "0.27.1",
}  # fmt: skip


def vllm_version(image_or_release: str) -> str | None:
    """The vLLM the vllm image of this release ships (``"25.09"`` or an image tag); None where
    the matrix does not say."""
    release = release_of(image_or_release) or image_or_release
    return VLLM_VERSIONS.get(release)


def trtllm_version(image_or_release: str) -> str | None:
    """The TensorRT-LLM the trtllm image of this release ships; None where the matrix does not
    say."""
    release = release_of(image_or_release) or image_or_release
    return TRTLLM_VERSIONS.get(release)


#: kit choices (not external facts): /dev/shm per GPU of an LLM pod (NCCL and the engines'
#: worker processes exchange tensors there; Docker's 64 MiB default is far too small), its
#: floor, and the startup budget of a pod that loads (or downloads) an LLM's weights
SHM_GIB_PER_GPU = 2
SHM_GIB_MIN = 2
LLM_STARTUP_BUDGET_SECONDS = 1800


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
