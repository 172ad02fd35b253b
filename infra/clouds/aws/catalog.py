"""AWS's GPU catalog: which EC2 / SageMaker GPU instance families and sizes exist, their GPUs
(kinds from ``infra.facts.hardware.GPUS``), instance-store NVMe and host, the families the kit
refuses and why, and SageMaker's container limits. Pure data (no cloud SDK); the sagemaker,
sagemaker-ic and eks targets read it, and ``infra.clouds.aws.generate`` (botocore's enums) is
checked against it by tests, so the two cannot drift.

Sources:
- EC2 / SageMaker instance GPUs, GPU count and instance-store NVMe size: the EC2 accelerated
  computing instance type pages (aws.amazon.com/ec2/instance-types/g4, g5, g6, g6e, p3, p4, p5;
  g6e 4/8/16/24xlarge and p5.4xlarge added 2026-11-26; g7e, p4de, p5e, p5en, p6-b200,
  p6-b300 added 2026-11-27, see EC2_GPU_FAMILIES) and
  SageMaker's "Instance storage volumes" page (instances with NVMe use it as model storage).
  Which sizes exist: botocore's ``ProductionVariantInstanceType`` enum (generated.json); a
  test fails when the enum lists a size of a family below that this table lacks, and when
  botocore (SageMaker's or EC2's enum) lists a GPU family neither here nor in
  ``UNSUPPORTED_GPU_FAMILIES``. This is the one table of GPU counts and host size of AWS
  instances: EKS, SageMaker MME and inference components all read it.
- Python-backend shared memory: the SageMaker ``serve`` script of triton-inference-server/server
  (docker/sagemaker/serve: shm-default-byte-size 16 MiB unless
  SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE)
  and the Docker default /dev/shm of 64 MiB, which SageMaker endpoints cannot change
  (aws/sagemaker-python-sdk#2801, aws/amazon-sagemaker-examples#3506).
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.facts.hardware import MIB


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
#: in neither table fails tests/clouds/aws/test_generated.py and is reported by `tdk doctor`.
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

#: /dev/shm of a SageMaker endpoint container (Docker's default; not configurable there)
SAGEMAKER_SHM_BYTES = 64 * MIB
#: shm-default-byte-size the SageMaker serve script gives each Python-backend instance
SAGEMAKER_PYTHON_SHM_DEFAULT = 16 * MIB
#: EBS volume SageMaker attaches to instances without NVMe instance store (ModelDataUrl limit)
SAGEMAKER_DEFAULT_VOLUME_GB = 30


def ec2_family(instance_type: str, prefix: str = "") -> tuple[str, str]:
    """``g5.xlarge`` -> (``g5``, ``xlarge``); a service that prefixes the type (SageMaker's
    ``ml.g5.xlarge``) passes its ``prefix``."""
    parts = instance_type.removeprefix(prefix).split(".")
    return (parts[0], parts[1]) if len(parts) == 2 else (instance_type, "")
