"""Generic hardware and image facts: GPU kinds (memory, compute capability) and what each
Triton image provides. Pure data (no cloud SDK). Each cloud's catalog of instances names its
GPUs by these kinds and lives with its cloud or target (``infra/clouds/<cloud>/catalog.py``,
``infra/targets/<target>/catalog.py``); tests check those tables against this one.

Sources:
- GPU memory and compute capability: NVIDIA's CUDA GPU list (developer.nvidia.com/cuda-gpus)
  and the data sheets of T4, A10G, L4, L40S, A100, H100, V100.
- Image backends: the backends directory of NVIDIA's tritonserver:<yy.mm>-py3 images and the
  SageMaker Triton images built from them (GPU image; the CPU image lacks TensorRT and DALI).
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
GIB = 1024 * MIB


@dataclass(frozen=True)
class Gpu:
    """One GPU kind: memory and CUDA compute capability (major, minor)."""

    kind: str
    memory_gib: int
    compute: tuple[int, int]


GPUS: dict[str, Gpu] = {
    g.kind: g
    for g in (
        Gpu("T4", 16, (7, 5)),
        Gpu("A10G", 24, (8, 6)),
        Gpu("L4", 24, (8, 9)),
        Gpu("L40S", 48, (8, 9)),
        Gpu("A100-40GB", 40, (8, 0)),
        Gpu("A100-80GB", 80, (8, 0)),
        Gpu("H100", 80, (9, 0)),
        Gpu("V100", 16, (7, 0)),
        # compute capability: developer.nvidia.com/cuda-gpus (checked 2026-11-27); memory:
        # the whole-GPU MIG profile (infra/clouds/aws/catalog.py), NVIDIA's RTX PRO 6000 page
        Gpu("H200", 141, (9, 0)),
        Gpu("B200", 180, (10, 0)),
        Gpu("B300", 269, (10, 3)),
        Gpu("RTX-PRO-6000", 96, (12, 0)),
    )
}


_GPU_BACKENDS = frozenset(
    {"tensorrt", "onnxruntime", "pytorch", "tensorflow", "python", "openvino", "fil", "dali",
     "ensemble", "identity", "repeat", "square"}
)  # fmt: skip
_CPU_BACKENDS = _GPU_BACKENDS - {"tensorrt", "dali"}
#: the TensorFlow backend left the images in 25.03 (Triton release notes)
_NO_TF = frozenset({"tensorflow"})

#: Triton release notes (docs.nvidia.com/deeplearning/triton-inference-server/release-notes/
#: rel-<yy>-<mm>.html): Triton version, CUDA, TensorRT, compute capability; checked 2026-11-26.
#: 26.05 (rel-26-05.html): "based on CUDA 13.2.1", compute capability 7.5 and later; Triton
#: 2.69.0 from the server's GitHub releases ("Release 2.<n>.0 corresponding to NGC container
#: <yy.mm>", 2.65.0 = 26.01, one a month). The 26.05 notes checked do not give its TensorRT:
#: ``tensorrt`` stays None and validate says so for TensorRT engines (TDK906), never guesses.
TRITON_RELEASE_NOTES = (
    "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/index.html"
)
TRITON_FACTS_CHECKED = "2026-11-26"


@dataclass(frozen=True)
class Image:
    """A published Triton image release: the Triton version, CUDA, TensorRT, minimum driver
    branch, lowest compute capability, its backends, and where those facts come from.

    A row exists only for a release NVIDIA has published (its release notes page exists);
    ``cuda`` is required. ``triton``, ``tensorrt`` and ``driver`` are None where the sources
    checked do not give them: the kit says so (TDK906 for engines) and never guesses.
    """

    version: str
    triton: str | None
    tensorrt: tuple[int, int] | None
    cuda: tuple[int, int]
    gpu_backends: frozenset[str] = _GPU_BACKENDS
    cpu_backends: frozenset[str] = _CPU_BACKENDS
    #: lowest NVIDIA driver branch the release notes name (None: the notes leave it blank)
    driver: int | None = None
    source: str = TRITON_RELEASE_NOTES
    checked: str = TRITON_FACTS_CHECKED
    #: the NGC release whose base image (``tritonserver:<upstream>-py3-min``: CUDA, TensorRT)
    #: this Triton is built on, where it is not the image's own (UPSTREAM_SOURCE); None: the same
    upstream: str | None = None
    #: False where no source gave ``upstream_container_version`` and the image's own release is
    #: assumed (26.09, 26.10: their release branches were in no copy read)
    base_verified: bool = True
    #: which sources were checked and lack the TensorRT version / driver (None values only)
    tensorrt_gap: str = ""
    driver_gap: str = ""

    def tensorrt_text(self) -> str:
        """``TensorRT 10.13``, or why tdk's facts have no TensorRT for this release."""
        if self.tensorrt is not None:
            return f"TensorRT {self.tensorrt[0]}.{self.tensorrt[1]}"
        gap = self.tensorrt_gap or "no source recorded in infra/facts/hardware.py gives it"
        return f"TensorRT unknown for Triton {self.version} ({gap})"

    def driver_text(self) -> str:
        """``driver 580 or later``, or why tdk's facts have no minimum driver branch."""
        if self.driver is not None:
            return f"NVIDIA driver {self.driver} or later"
        gap = self.driver_gap or f"not recorded from {self.source}"
        return f"minimum NVIDIA driver unknown for Triton {self.version} ({gap})"

    def base_text(self) -> str:
        """The release the image is built on, and whether a source said so."""
        if self.base_verified:
            return f"built on the {self.base} release ({UPSTREAM_SOURCE})"
        return (
            f"built on the {self.base} release by assumption: no source read gave build.py's "
            f"upstream_container_version for {self.version} ({UPSTREAM_SOURCE})"
        )

    @property
    def base(self) -> str:
        """The NGC release of the image's CUDA and TensorRT: the TensorRT container
        (``nvcr.io/nvidia/tensorrt:<base>-py3``) that builds engines this Triton loads."""
        return self.upstream or self.version

    @property
    def min_compute(self) -> tuple[int, int]:
        """Lowest CUDA compute capability: 7.5 from 25.01 on (release notes), 6.0 before."""
        return (7, 5) if self.version >= "25.01" else (6, 0)


def _notes(version: str) -> str:
    """The release notes page of Triton ``version`` (``26.06`` -> ``.../rel-26-06.html``)."""
    return TRITON_RELEASE_NOTES.replace("index.html", f"rel-{version.replace('.', '-')}.html")


#: Why the rows from 26.05 on have no TensorRT and no driver (re-checked 2026-11-27): NVIDIA's
#: release notes pages (rel-26-05 ... rel-26-10.html) have an empty "The container also
#: includes the following:" list and a "Driver Requirements" that says only "requires the NVIDIA
#: Driver release"; the server's docs/introduction/compatibility.md (branches r26.05 ... r26.08)
#: gives TensorRT (10.14.1.48) only for the trtllm-python-py3 image and a driver only for the
#: trtllm and vllm images, which are built on other bases; NVIDIA's Frameworks Support Matrix and
#: the TensorRT container release notes for 26.xx were not in the copies searched.
_TRT_GAP = (
    "the release notes {notes} list no container contents, compatibility.md in triton-"
    "inference-server/server gives TensorRT only for the trtllm-python-py3 image, and NVIDIA's "
    "Frameworks Support Matrix was not in the sources checked on 2026-11-27"
)
_DRIVER_GAP = (
    'the release notes {notes} say only "requires the NVIDIA Driver release" (checked 2026-11-27)'
)


def _trt_gap(version: str) -> str:
    return _TRT_GAP.format(notes=_notes(version))


def _driver_gap(version: str) -> str:
    return _DRIVER_GAP.format(notes=_notes(version))


#: Releases after 26.05, checked 2026-11-27 (h37). CUDA and compute capability 7.5: each
#: release's notes (rel-26-06 ... rel-26-10.html; 26.06's notes say "Release 26.05 supports
#: compute capability 7.5", a slip in NVIDIA's text). Their "Driver Requirements" name no
#: driver ("requires the NVIDIA Driver release."): ``driver`` is None. Triton version: the
#: server's build.py TRITON_VERSION_MAP on tags v2.70.0 (26.06), v2.71.0 (26.07) and branch
#: r26.08 (2.72.0); 2.73.0 for 26.09 from the server's commit e1db8a6 "Update default branch
#: to track 2.73.0 / 26.09"; 26.10's Triton version was not found (None: the newest server
#: snapshot, main at e1db8a6 of 2026-08-19, has no 26.10 branch or tag). TensorRT of the py3
#: image: neither the notes' excerpts nor docs/introduction/compatibility.md (which lists only
#: the trtllm and vllm flavours) give it: None. No 26.11 notes were published by 2026-11-27.
NEW_RELEASES_CHECKED = "2026-11-27"
#: Triton's build.py builds release <yy.mm> on ``tritonserver:<upstream_container_version>-py3-
#: min`` (DEFAULT_TRITON_VERSION_MAP / TRITON_VERSION_MAP at each release tag of triton-
#: inference-server/server, read 2026-11-27): the same release for v2.41.0 (23.12) to v2.61.0
#: (25.09), v2.71.0 (26.07) and branch r26.08; 26.04 for v2.69.0 (26.05) and 26.05 for v2.70.0
#: (26.06). 26.09 and 26.10: no source (the server snapshot of 2026-08-22 has no r26.09/r26.10
#: branch; main's 2.73.0dev map names 26.07, a development value the release branch replaces):
#: the same release is assumed, ``base_verified`` is False, and validate, doctor and
#: docs/build.md say so.
UPSTREAM_SOURCE = "https://github.com/triton-inference-server/server/blob/v2.69.0/build.py"


IMAGES: dict[str, Image] = {
    i.version: i
    for i in (
        Image("23.12", "2.41.0", (8, 6), (12, 3)),
        Image("24.01", "2.42.0", (8, 6), (12, 3)),
        Image("24.03", "2.44.0", (8, 6), (12, 4)),
        Image("24.05", "2.46.0", (10, 0), (12, 4)),
        Image("24.09", "2.50.0", (10, 4), (12, 6)),
        Image("25.04", "2.57.0", (10, 9), (12, 9), _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF),
        Image("25.09", "2.61.0", (10, 13), (13, 0), _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF),
        Image("26.05", "2.69.0", None, (13, 2), _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF,
              upstream="26.04", tensorrt_gap=_trt_gap("26.05"),
              driver_gap=_driver_gap("26.05")),
        *(
            Image(version, triton, None, cuda, _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF,
                  source=_notes(version), checked=NEW_RELEASES_CHECKED, upstream=upstream,
                  base_verified=verified, tensorrt_gap=_trt_gap(version),
                  driver_gap=_driver_gap(version))
            for version, triton, cuda, upstream, verified in (
                ("26.06", "2.70.0", (13, 3), "26.05", True),  # CUDA 13.3.0
                ("26.07", "2.71.0", (13, 3), None, True),  # CUDA 13.3.1
                ("26.08", "2.72.0", (13, 4), None, True),  # CUDA 13.4.1
                ("26.09", "2.73.0", (13, 4), None, False),  # CUDA 13.4.1
                ("26.10", None, (13, 4), None, False),  # CUDA 13.4.3
            )
        ),
    )
}  # fmt: skip


def image_version(image: str) -> str:
    """``nvcr.io/nvidia/tritonserver:24.09-py3`` or ``24.09`` -> ``24.09``."""
    tag = image.rpartition(":")[2] if ":" in image else image
    return tag.split("-")[0]
