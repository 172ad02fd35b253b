"""Engine images against node drivers (issue 48 item 4): the CUDA and CUDA driver each Triton
engine image is built with, and whether it runs on a node's NVIDIA driver.

Sources (read 2026-12-07):

- ``ENGINE_DRIVERS``: triton-inference-server/server ``docs/introduction/compatibility.md`` on
  branch r26.08 (commit 6fa22ae), the ``-trtllm-python-py3`` and ``-vllm-python-py3`` tables'
  "CUDA version" and "CUDA Driver version" columns (the driver the image's CUDA ships with).
- ``MINOR_COMPAT``: NVIDIA's CUDA Compatibility guide, "Minor Version Compatibility" table 1:
  CUDA 13.x needs a driver >= 580, CUDA 12.x >= 525 (and < 580); within a major, an image
  built with a newer minor runs on such a driver "with limited feature-set" (PTX of the newer
  minor cannot be JIT-compiled).
- ``FORWARD_COMPAT_SOURCE``: below the major's minimum only the forward-compatibility package
  (``cuda-compat``, which the NGC images carry) can run it, "applicable only for systems with
  NVIDIA Data Center GPUs" (and select RTX server SKUs, Jetson), on the driver branches NVIDIA
  supports for it, which no source read here lists: on a data-center GPU whether it runs is
  unknown (said so), on any other GPU it is refused.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from infra.facts import Source
from infra.facts.llm import FLAVOURS, release_of

DRIVERS_READ = dt.date(2026, 12, 7)
ENGINE_MATRIX = Source(
    "https://github.com/triton-inference-server/server/blob/6fa22ae028e60f03170a8a07ebc8a54587c8581d/"
    "docs/introduction/compatibility.md",
    DRIVERS_READ,
)
MINOR_COMPAT_SOURCE = Source(
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
    DRIVERS_READ,
)
FORWARD_COMPAT_SOURCE = Source(
    "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html", DRIVERS_READ
)
#: NVIDIA's data-center GPU lines (forward compatibility applies to them): every GPU kind in
#: tdk's catalogs (T4, A10, A10G, L4, L40S, A100, H100, H200) starts with one of these
DATA_CENTER_PREFIXES = ("T4", "A10", "L4", "L40", "A100", "H100", "H200", "B200", "V100")
#: CUDA major -> lowest driver branch of its minor-version compatibility (MINOR_COMPAT_SOURCE)
MINOR_COMPAT: dict[int, int] = {13: 580, 12: 525}

_TRT = FLAVOURS["tensorrt_llm"]
_VLLM = FLAVOURS["vllm"]
#: (flavour, release) -> (CUDA major.minor, the CUDA driver it ships with) (ENGINE_MATRIX)
ENGINE_DRIVERS: dict[tuple[str, str], tuple[tuple[int, int], str]] = {
    **{(_TRT, r): ((13, 1), "590.44.01") for r in ("26.03", "26.04", "26.05", "26.06", "26.07")},
    **{(_TRT, r): ((13, 0), "580.95.05") for r in ("25.11", "25.12", "26.01", "26.02")},
    (_TRT, "25.10"): ((12, 9), "575.57.08"),
    (_VLLM, "26.08"): ((13, 4), "615.61"),
    (_VLLM, "26.07"): ((13, 3), "610.43.02"),
    (_VLLM, "26.06"): ((13, 3), "610.43.02"),
    (_VLLM, "26.05"): ((13, 2), "595.58.03"),
    (_VLLM, "26.04"): ((13, 2), "595.58.03"),
    (_VLLM, "26.03"): ((13, 2), "595.45.04"),
    (_VLLM, "26.02"): ((13, 1), "590.48.01"),
    (_VLLM, "26.01"): ((13, 1), "590.48.01"),
    (_VLLM, "25.12"): ((13, 1), "590.44.01"),
    (_VLLM, "25.11"): ((13, 0), "580.95.05"),
    (_VLLM, "25.10"): ((13, 0), "580.95.05"),
}  # fmt: skip


@dataclass(frozen=True)
class NodeDriver:
    """The NVIDIA driver a target's GPU nodes run (``version`` None: unknown, ``why`` says
    which source was missing), with its source and read date."""

    version: str | None
    source: str
    read: dt.date = DRIVERS_READ
    why: str = ""

    def text(self) -> str:
        if self.version is None:
            return f"node driver unknown ({self.why})"
        return f"node driver {self.version} ({self.source}, read {self.read})"


@dataclass(frozen=True)
class DriverVerdict:
    """Whether an engine image runs on a node driver (``runs`` None: unknown) and whether it
    runs natively (the node's driver as new as the one the image's CUDA ships with)."""

    runs: bool | None
    native: bool
    message: str


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def _flavour(image: str) -> str:
    return image.rpartition(":")[2].partition("-")[2]


def engine_driver(image: str) -> tuple[tuple[int, int], str] | None:
    """(CUDA, its driver) of an engine image tag (None: not an engine image, or unrecorded)."""
    return ENGINE_DRIVERS.get((_flavour(image), release_of(image)))


def data_center(gpu_kind: str) -> bool:
    """Whether a GPU kind is of NVIDIA's data-center line (``DATA_CENTER_PREFIXES``)."""
    return gpu_kind.upper().startswith(DATA_CENTER_PREFIXES)


def verdict(image: str, node: NodeDriver, gpu_kind: str = "") -> DriverVerdict | None:
    """Whether engine ``image`` runs on ``node``'s driver on a ``gpu_kind`` GPU, and why (None:
    not an engine image)."""
    if _flavour(image) not in FLAVOURS.values():
        return None
    needs = engine_driver(image)
    if needs is None:
        return DriverVerdict(None, False, f"the CUDA driver of {image} is not recorded "
                             f"({ENGINE_MATRIX.url} lists none, read {DRIVERS_READ})")  # fmt: skip
    (major, minor), shipped = needs
    built = (f"{image} is built with CUDA {major}.{minor} (driver {shipped}; "
             f"{ENGINE_MATRIX.url}, read {DRIVERS_READ})")  # fmt: skip
    if node.version is None:
        return DriverVerdict(None, False, f"{built}; {node.text()}: whether it runs is unknown")
    have = node.text()
    if _key(node.version) >= _key(shipped):
        return DriverVerdict(True, True, f"{built}; {have} is as new: it runs")
    least = MINOR_COMPAT.get(major)
    compat = f"{MINOR_COMPAT_SOURCE.url}, read {DRIVERS_READ}"
    if least is not None and _key(node.version)[0] >= least:
        return DriverVerdict(True, False, f"{built}; {have} is older but of a CUDA {major}.x "
                             f"branch (>= {least}): it runs through CUDA minor version "
                             f"compatibility, with its limited feature set ({compat})")  # fmt: skip
    below = f"{built}; {have} is below CUDA {major}.x's minimum driver {least} ({compat})"
    forward = f"{FORWARD_COMPAT_SOURCE.url}, read {DRIVERS_READ}"
    if data_center(gpu_kind):
        return DriverVerdict(None, False, f"{below}: only NVIDIA's forward-compatibility "
                             f"package, which the image carries, can run it on this data-center "
                             f"GPU ({gpu_kind}), on the driver branches NVIDIA supports for it, "
                             f"which tdk has not recorded ({forward}): whether it runs is "
                             "unknown")  # fmt: skip
    return DriverVerdict(False, False, f"{below}, and forward compatibility applies only to "
                         f"data-center GPUs ({forward}), not to {gpu_kind or 'a CPU node'}: it "
                         "cannot run")  # fmt: skip
