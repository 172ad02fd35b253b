"""Target facts in one table: GPU kinds, instance types, and what each Triton image provides.

Pure data (no cloud SDK). ``tdk validate --target`` checks models against it, and the target
tables in ``infra/targets/<target>/`` (SageMaker and EKS instance families, GKE accelerators)
are checked against it by tests, so the two cannot drift.

Sources:
- GPU memory and compute capability: NVIDIA's CUDA GPU list (developer.nvidia.com/cuda-gpus)
  and the data sheets of T4, A10G, L4, L40S, A100, H100, V100.
- EC2 / SageMaker instance GPUs, GPU count and instance-store NVMe size (checked 2026-11-24):
  the EC2 accelerated computing instance type pages
  (aws.amazon.com/ec2/instance-types/g4, g5, g6, p3, p4, p5) and
  SageMaker's "Instance storage volumes" page (instances with NVMe use it as model storage).
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
from datetime import date

from infra.targets.versions import Source
from tdk.errors import ConfigError

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
    )
}


@dataclass(frozen=True)
class InstanceFamily:
    """An EC2 GPU family: its GPU, GPUs per size, and the instance-store NVMe per size (GB)."""

    gpu: str
    gpus: dict[str, int]
    disk_gb: dict[str, int]


EC2_GPU_FAMILIES: dict[str, InstanceFamily] = {
    "g4dn": InstanceFamily(
        "T4",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4},
        {"xlarge": 125, "2xlarge": 225, "4xlarge": 225, "8xlarge": 900, "16xlarge": 900,
         "12xlarge": 900},
    ),
    "g5": InstanceFamily(
        "A10G",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
         "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
        {"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "16xlarge": 1900,
         "12xlarge": 3800, "24xlarge": 3800, "48xlarge": 7600},
    ),
    "g6": InstanceFamily(
        "L4",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
         "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
        {"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "16xlarge": 1880,
         "12xlarge": 3760, "24xlarge": 3760, "48xlarge": 7520},
    ),
    "g6e": InstanceFamily("L40S", {"xlarge": 1, "2xlarge": 1, "12xlarge": 4, "48xlarge": 8},
                          {"xlarge": 250, "2xlarge": 450, "12xlarge": 3800, "48xlarge": 7600}),
    "p3": InstanceFamily("V100", {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8},
                         {"2xlarge": 0, "8xlarge": 0, "16xlarge": 0}),
    "p4d": InstanceFamily("A100-40GB", {"24xlarge": 8}, {"24xlarge": 8000}),
    "p5": InstanceFamily("H100", {"48xlarge": 8}, {"48xlarge": 30400}),
}  # fmt: skip

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


TRITON_SOURCE = Source(
    "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/index.html"
)
#: the TensorFlow backend left the images in 25.03 (TRITON_SOURCE, release 25.03)
_NO_TF = frozenset({"tensorflow"})


@dataclass(frozen=True)
class Image:
    """A Triton image version (``yy.mm``): its Triton release, CUDA, the oldest NVIDIA driver
    branch it runs on (forward compatibility on data-center GPUs included), the lowest GPU
    compute capability it supports, its TensorRT (None: not recorded) and its backends."""

    version: str
    triton: str
    cuda: tuple[int, int]
    min_driver: int
    min_compute: tuple[int, int]
    tensorrt: tuple[int, int] | None
    gpu_backends: frozenset[str] = _GPU_BACKENDS
    cpu_backends: frozenset[str] = _CPU_BACKENDS

    @property
    def released(self) -> date:
        """The first day of the image's month (NVIDIA publishes near its end): ages err old."""
        year, month = self.version.split(".")
        return date(2000 + int(year), int(month), 1)


IMAGES: dict[str, Image] = {
    i.version: i
    for i in (
        Image("23.12", "2.41.0", (12, 3), 470, (6, 0), (8, 6)),
        Image("24.01", "2.42.0", (12, 3), 470, (6, 0), (8, 6)),
        Image("24.03", "2.44.0", (12, 4), 470, (6, 0), (8, 6)),
        Image("24.05", "2.46.0", (12, 4), 470, (6, 0), (10, 0)),
        Image("24.09", "2.50.0", (12, 6), 470, (6, 0), (10, 4)),
        Image("25.04", "2.57.0", (12, 9), 535, (7, 5), (10, 9),
              _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF),
        Image("25.09", "2.61.0", (13, 0), 580, (7, 5), (10, 13),
              _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF),
        Image("26.05", "2.69.0", (13, 0), 580, (7, 5), None,
              _GPU_BACKENDS - _NO_TF, _CPU_BACKENDS - _NO_TF),
    )
}  # fmt: skip

AMI_SOURCE = Source(
    "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html"
)


@dataclass(frozen=True)
class InferenceAmi:
    """A SageMaker ``InferenceAmiVersion``: the NVIDIA driver branch and CUDA it brings (driver
    0 for the Neuron AMI of Inferentia/Trainium hosts, which run no Triton GPU image)."""

    name: str
    driver: int
    cuda: tuple[int, int]

    @property
    def gpu(self) -> bool:
        return self.driver > 0


#: every value of botocore's ProductionVariantInferenceAmiVersion (a test keeps them equal)
INFERENCE_AMIS: dict[str, InferenceAmi] = {
    a.name: a
    for a in (
        InferenceAmi("al2-ami-sagemaker-inference-gpu-2", 535, (12, 2)),
        InferenceAmi("al2-ami-sagemaker-inference-gpu-2-1", 535, (12, 2)),
        InferenceAmi("al2-ami-sagemaker-inference-gpu-3-1", 550, (12, 4)),
        InferenceAmi("al2023-ami-sagemaker-inference-gpu-4-1", 580, (13, 0)),
        InferenceAmi("al2-ami-sagemaker-inference-neuron-2", 0, (0, 0)),
    )
}


#: stack values that mean "the newest image": sagemakerTritonVersion latest, k8sTritonImage auto
NEWEST = ("", "latest", "auto")


def newest_version() -> str:
    return max(IMAGES, key=lambda v: tuple(int(p) for p in v.split(".")))


def resolve_version(value: str) -> str:
    """A stack's image value (a ``yy.mm``, an image reference, ``latest`` or ``auto``) as the
    ``yy.mm`` of the image it runs."""
    return newest_version() if value in NEWEST else image_version(value)


def image(version: str) -> Image:
    """The facts of a Triton image version; ConfigError naming the known ones."""
    try:
        return IMAGES[image_version(version)]
    except KeyError:
        raise ConfigError(
            f"Triton image {version!r} is not in the kit's facts (known: {', '.join(IMAGES)}; "
            f"{TRITON_SOURCE.url})",
            hint="pick a known version, or add its row to infra/targets/facts.py with its source",
        ) from None


def ami_for(version: str) -> str:
    """The InferenceAmiVersion an image needs: the oldest AMI whose driver runs its CUDA (a
    CUDA 12 image runs on R535/R550 through forward compatibility; CUDA 13 needs R580)."""
    needed = image(version)
    fits = [a for a in INFERENCE_AMIS.values() if a.gpu and a.driver >= needed.min_driver]
    fits.sort(key=lambda a: (a.cuda[0] != needed.cuda[0], -a.driver))
    return fits[0].name


def check_image_ami(version: str, ami: str, key: str) -> None:
    """Refuse an AMI whose driver is older than the image needs (the container would stop
    with "compatibility mode is UNAVAILABLE", aws/deep-learning-containers#4990)."""
    needed, host = image(version), INFERENCE_AMIS.get(ami)
    if host is None:
        raise ConfigError(
            f"{key} is {ami!r}, not an InferenceAmiVersion (known: {', '.join(INFERENCE_AMIS)})",
            hint=f"use {ami_for(version)} or auto",
        )
    if not host.gpu:
        raise ConfigError(
            f"{key} {ami} is the Neuron AMI of Inferentia/Trainium hosts; the Triton GPU image "
            "needs a GPU AMI",
            hint=f"use {ami_for(version)} (or auto)",
        )
    if host.driver < needed.min_driver:
        raise ConfigError(
            f"{key} {ami} brings NVIDIA driver {host.driver}, but Triton {version} (CUDA "
            f"{needed.cuda[0]}.{needed.cuda[1]}) needs {needed.min_driver} or newer",
            hint=f"use {ami_for(version)} (or auto), or an older Triton image",
        )


def check_image_gpu(version: str, gpu: str, key: str) -> None:
    """Refuse a GPU whose compute capability the image no longer supports (V100 from 25.01)."""
    needed, have = image(version), GPUS[gpu].compute
    if have < needed.min_compute:
        raise ConfigError(
            f"{key}: Triton {version} needs GPU compute capability "
            f"{needed.min_compute[0]}.{needed.min_compute[1]} or higher; the {gpu} has "
            f"{have[0]}.{have[1]} ({TRITON_SOURCE.url})",
            hint="pick a T4/A10G/L4/L40S/A100/H100 instance, or a Triton image before 25.01",
        )


def ec2_family(instance_type: str) -> tuple[str, str]:
    """``ml.g5.xlarge`` or ``g5.xlarge`` -> (``g5``, ``xlarge``)."""
    parts = instance_type.removeprefix("ml.").split(".")
    return (parts[0], parts[1]) if len(parts) == 2 else (instance_type, "")


def image_version(image: str) -> str:
    """``nvcr.io/nvidia/tritonserver:24.09-py3`` or ``24.09`` -> ``24.09``."""
    tag = image.rpartition(":")[2] if ":" in image else image
    return tag.split("-")[0]
