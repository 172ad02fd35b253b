"""What an EC2 or SageMaker instance type offers a model (``TargetSpec``), from the AWS catalog
(``catalog.py``): eks, sagemaker and sagemaker-ic build their ``offer`` with it."""

from __future__ import annotations

from infra.clouds.aws import catalog as aws_catalog
from infra.facts import hardware as facts
from infra.values.offer import ShmLimit, TargetSpec, image_facts
from tdk.errors import UsageError

#: a SageMaker MME container's /dev/shm and what each Python-backend instance takes of it
SAGEMAKER_MME_SHM = ShmLimit(
    "SageMaker container",
    aws_catalog.SAGEMAKER_SHM_BYTES,
    aws_catalog.SAGEMAKER_PYTHON_SHM_DEFAULT,
    "sagemakerTritonShmDefaultBytes",
)


def instance_spec(
    target: str,
    instance_type: str,
    image: str = "",
    prefix: str = "",
    mme: bool = False,
    cpu: bool = False,
    shares_gpus: bool = True,
) -> TargetSpec:
    """An EC2 GPU instance type (``prefix`` ``ml.`` on SageMaker); with ``cpu`` also the CPU
    families c/m/r/t, with SageMaker's default volume as the disk."""
    if not instance_type:
        raise UsageError(
            f"--target {target} needs --instance-type (the instance to check against)",
            hint=f"add --instance-type {prefix}g5.xlarge, or --stack NAME for a stack's",
        )
    found = image_facts(image)
    shm = SAGEMAKER_MME_SHM if mme else None
    family, size = aws_catalog.ec2_family(instance_type, prefix)
    offer = aws_catalog.EC2_GPU_FAMILIES.get(family)
    if offer is None or size not in offer.gpus:
        if cpu and instance_type.startswith(prefix) and family[:1] in "cmrt":
            return TargetSpec(target, instance_type, None, aws_catalog.SAGEMAKER_DEFAULT_VOLUME_GB,
                              found, mme=mme, gpus=0, image_name=image, python_shm=shm)  # fmt: skip
        choices = [f"{f}.{s}" for f, o in aws_catalog.EC2_GPU_FAMILIES.items() for s in o.gpus]
        raise UsageError(
            f"--instance-type {instance_type!r} is not a GPU instance type tdk knows",
            hint=f"use one of {', '.join(prefix + c for c in choices[:8])}, ...",
        )
    disk = offer.disk_gb[size] or aws_catalog.SAGEMAKER_DEFAULT_VOLUME_GB
    gpu, gpus = facts.GPUS[offer.gpu], offer.gpus[size]
    return TargetSpec(target, instance_type, gpu, disk, found, mme, gpus, shares_gpus, image, shm)
