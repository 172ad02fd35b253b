"""Target facts in one table: GPU kinds, instance types, and what each Triton image provides.

Pure data (no cloud SDK). ``tdk validate --target`` checks models against it, and the target
tables in ``infra/targets/<target>/`` (SageMaker and EKS instance families, GKE accelerators)
are checked against it by tests, so the two cannot drift.

Sources:
- GPU memory and compute capability: NVIDIA's CUDA GPU list (developer.nvidia.com/cuda-gpus)
  and the data sheets of T4, A10G, L4, L40S, A100, H100, V100.
- EC2 / SageMaker instance GPUs, GPU count and instance-store NVMe size: the EC2 accelerated
  computing instance type pages (aws.amazon.com/ec2/instance-types/g4, g5, g6, g6e, p3, p4, p5;
  g6e 4/8/16/24xlarge and p5.4xlarge added 2026-11-26; g7e, p4de, p5e, p5en, p6-b200,
  p6-b300 added 2026-11-27, see EC2_GPU_FAMILIES) and
  SageMaker's "Instance storage volumes" page (instances with NVMe use it as model storage).
  Which sizes exist: botocore's ``ProductionVariantInstanceType`` enum (aws_generated.json); a
  test fails when the enum lists a size of a family below that this table lacks, and when
  botocore (SageMaker's or EC2's enum) lists a GPU family neither here nor in
  ``UNSUPPORTED_GPU_FAMILIES``. This is the one table of GPU counts, GPU memory, compute
  capability and host size: EKS, SageMaker MME and inference components all read it.
- GKE accelerators: cloud.google.com/compute/docs/gpus.
- Python-backend shared memory: the SageMaker ``serve`` script of triton-inference-server/server
  (docker/sagemaker/serve: shm-default-byte-size 16 MiB unless
  SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE)
  and the Docker default /dev/shm of 64 MiB, which SageMaker endpoints cannot change
  (aws/sagemaker-python-sdk#2801, aws/amazon-sagemaker-examples#3506).
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
        # the whole-GPU MIG profile (see EC2_GPU_FAMILIES) and NVIDIA's RTX PRO 6000 page
        Gpu("H200", 141, (9, 0)),
        Gpu("B200", 180, (10, 0)),
        Gpu("B300", 269, (10, 3)),
        Gpu("RTX-PRO-6000", 96, (12, 0)),
    )
}


@dataclass(frozen=True)
class InstanceFamily:
    """An EC2 GPU family: its GPU, GPUs per size, the instance-store NVMe per size (GB; 0: none
    recorded, the kit then assumes SageMaker's default volume) and the host per size (vCPUs,
    GiB). Every target reads GPU counts from here (EKS, SageMaker MME and components)."""

    gpu: str
    gpus: dict[str, int]
    disk_gb: dict[str, int]
    host: dict[str, tuple[int, int]]


#: Host vCPUs and memory (GiB): the EC2 instance type pages (g4/g5/g6/g6e/p3/p4/p5, checked
#: 2026-11-26); g7e, p4de, p5e, p5en, p6-b200, p6-b300 (and their GPU counts) from
#: aws/sagemaker-hyperpod-cli src/sagemaker/hyperpod/training/constants.py INSTANCE_RESOURCES
#: (commit 2d082e9, checked 2026-11-27), GPU memory from its MIG profiles (the 7g profile is the
#: whole GPU: H200 141 GB, B200 180 GB, B300 269 GB); instance store of p5e/p5en/p6: 8 x 3.84 TB
#: (EC2 P5/P6 pages). g7e's instance store is not recorded (0).
EC2_GPU_FAMILIES: dict[str, InstanceFamily] = {
    "g4dn": InstanceFamily(
        "T4",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4},
        {"xlarge": 125, "2xlarge": 225, "4xlarge": 225, "8xlarge": 900, "16xlarge": 900,
         "12xlarge": 900},
        {"xlarge": (4, 16), "2xlarge": (8, 32), "4xlarge": (16, 64), "8xlarge": (32, 128),
         "12xlarge": (48, 192), "16xlarge": (64, 256)},
    ),
    "g5": InstanceFamily(
        "A10G",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
         "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
        {"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "16xlarge": 1900,
         "12xlarge": 3800, "24xlarge": 3800, "48xlarge": 7600},
        {"xlarge": (4, 16), "2xlarge": (8, 32), "4xlarge": (16, 64), "8xlarge": (32, 128),
         "12xlarge": (48, 192), "16xlarge": (64, 256), "24xlarge": (96, 384),
         "48xlarge": (192, 768)},
    ),
    "g6": InstanceFamily(
        "L4",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
         "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
        {"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "16xlarge": 1880,
         "12xlarge": 3760, "24xlarge": 3760, "48xlarge": 7520},
        {"xlarge": (4, 16), "2xlarge": (8, 32), "4xlarge": (16, 64), "8xlarge": (32, 128),
         "12xlarge": (48, 192), "16xlarge": (64, 256), "24xlarge": (96, 384),
         "48xlarge": (192, 768)},
    ),
    "g6e": InstanceFamily(
        "L40S",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
         "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
        {"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "16xlarge": 1900,
         "12xlarge": 3800, "24xlarge": 3800, "48xlarge": 7600},
        {"xlarge": (4, 32), "2xlarge": (8, 64), "4xlarge": (16, 128), "8xlarge": (32, 256),
         "16xlarge": (64, 512), "12xlarge": (48, 384), "24xlarge": (96, 768),
         "48xlarge": (192, 1536)},
    ),
    "g7e": InstanceFamily(
        "RTX-PRO-6000",
        {"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4, "48xlarge": 8},
        {"2xlarge": 0, "4xlarge": 0, "8xlarge": 0, "12xlarge": 0, "24xlarge": 0, "48xlarge": 0},
        {"2xlarge": (8, 64), "4xlarge": (16, 128), "8xlarge": (32, 256),
         "12xlarge": (48, 512), "24xlarge": (96, 1024), "48xlarge": (192, 2048)},
    ),
    "p3": InstanceFamily("V100", {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8},
                         {"2xlarge": 0, "8xlarge": 0, "16xlarge": 0},
                         {"2xlarge": (8, 61), "8xlarge": (32, 244), "16xlarge": (64, 488)}),
    "p4d": InstanceFamily("A100-40GB", {"24xlarge": 8}, {"24xlarge": 8000},
                          {"24xlarge": (96, 1152)}),
    "p4de": InstanceFamily("A100-80GB", {"24xlarge": 8}, {"24xlarge": 8000},
                           {"24xlarge": (96, 1152)}),
    "p5": InstanceFamily("H100", {"4xlarge": 1, "48xlarge": 8},
                         {"4xlarge": 3840, "48xlarge": 30400},
                         {"4xlarge": (16, 256), "48xlarge": (192, 2048)}),
    "p5e": InstanceFamily("H200", {"48xlarge": 8}, {"48xlarge": 30720},
                          {"48xlarge": (192, 2048)}),
    "p5en": InstanceFamily("H200", {"48xlarge": 8}, {"48xlarge": 30720},
                           {"48xlarge": (192, 2048)}),
    "p6-b200": InstanceFamily("B200", {"48xlarge": 8}, {"48xlarge": 30720},
                              {"48xlarge": (192, 2048)}),
    "p6-b300": InstanceFamily("B300", {"48xlarge": 8}, {"48xlarge": 30720},
                              {"48xlarge": (192, 4096)}),
}  # fmt: skip

#: g7 (NVIDIA RTX PRO 4500 Blackwell, 32 GB; sizes 2/4/8/12/24/48xlarge in botocore 1.44.8's
#: EC2 InstanceType and SageMaker ProductionVariantInstanceType enums), re-checked 2026-11-27:
#: - driver: "G7 instances ... require driver version 595 or later. The EKS-optimized
#:   accelerated AMI ships with driver version 580 by default, which does not support G7"
#:   (awslabs/amazon-eks-ami doc/usage/g7-ami.md, snapshot of 2026-07-24); the kit's EKS GPU
#:   nodes use that AMI (AL2023_x86_64_NVIDIA) and SageMaker's newest GPU InferenceAmiVersion,
#:   al2023-ami-sagemaker-inference-gpu-4-1, documents driver 580 (botocore 1.44.8);
#: - GPUs per size: the sources disagree. kubernetes/autoscaler PR #9862 (commit 69ee667,
#:   generated from EC2 DescribeInstanceTypes in us-west-2): 1, 1, 1, 2, 4, 8; its issue #9854
#:   (hand-written): 1, 1, 2, 4, 4, 8. AWS's G7 page was not in the sources searched.
G7_REFUSED = (
    "NVIDIA RTX PRO 4500 Blackwell: needs NVIDIA driver 595 or later, but the EKS NVIDIA AMI "
    "and SageMaker's newest GPU AMI ship 580 (awslabs/amazon-eks-ami doc/usage/g7-ami.md); "
    "and the sources read disagree on its GPUs per size (checked 2026-11-27)"
)

#: GPU families botocore lists (ml.g*/ml.p*) that the kit has no facts for, and why: a family
#: in neither table fails tests/infra/test_aws_generated.py and is reported by `tdk doctor`.
_OLD = "compute capability below 7.5: current Triton images (25.01 on) refuse it"
UNSUPPORTED_GPU_FAMILIES: dict[str, str] = {
    "p2": f"NVIDIA K80, {_OLD}",
    "g2": f"NVIDIA GRID K520, {_OLD}",
    "g3": f"NVIDIA M60, {_OLD}",
    "g3s": f"NVIDIA M60, {_OLD}",
    "p3dn": f"NVIDIA V100, {_OLD}",
    "g4ad": "AMD Radeon GPUs: no CUDA",
    "g5g": "Graviton (arm64) with T4G: the kit deploys x86-64 Triton images",
    "p6e-gb200": "Grace (arm64) hosts: the kit deploys x86-64 Triton images",
    "g6f": "fractional NVIDIA L4 (a share of one GPU): not in tdk's hardware table",
    "gr6f": "fractional NVIDIA L4 (a share of one GPU): not in tdk's hardware table",
    "gr6": "NVIDIA L4 with more host memory: sizes and host facts not in tdk's table yet",
    "g7": G7_REFUSED,
}

#: GKE accelerator type -> GPU kind
GKE_ACCELERATORS: dict[str, str] = {
    "nvidia-tesla-t4": "T4",
    "nvidia-l4": "L4",
    "nvidia-tesla-a100": "A100-40GB",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-h100-80gb": "H100",
    "nvidia-tesla-v100": "V100",
}

#: /dev/shm of a SageMaker endpoint container (Docker's default; not configurable there)
SAGEMAKER_SHM_BYTES = 64 * MIB
#: shm-default-byte-size the SageMaker serve script gives each Python-backend instance
SAGEMAKER_PYTHON_SHM_DEFAULT = 16 * MIB
#: EBS volume SageMaker attaches to instances without NVMe instance store (ModelDataUrl limit)
SAGEMAKER_DEFAULT_VOLUME_GB = 30

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
#: ``tensorrt`` stays None and validate says so for TensorRT plans (TDK906), never guesses.
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
    checked do not give them: the kit says so (TDK906 for plans) and never guesses.
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
        (``nvcr.io/nvidia/tensorrt:<base>-py3``) that builds plans this Triton loads."""
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


def ec2_family(instance_type: str, prefix: str = "") -> tuple[str, str]:
    """``g5.xlarge`` -> (``g5``, ``xlarge``); a service that prefixes the type (SageMaker's
    ``ml.g5.xlarge``) passes its ``prefix``."""
    parts = instance_type.removeprefix(prefix).split(".")
    return (parts[0], parts[1]) if len(parts) == 2 else (instance_type, "")


def image_version(image: str) -> str:
    """``nvcr.io/nvidia/tritonserver:24.09-py3`` or ``24.09`` -> ``24.09``."""
    tag = image.rpartition(":")[2] if ":" in image else image
    return tag.split("-")[0]
