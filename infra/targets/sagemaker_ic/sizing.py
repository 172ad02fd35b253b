"""How much of an instance one copy of a model reserves: accelerators, CPU cores, memory (pure).

An inference component reserves ``NumberOfAcceleratorDevicesRequired`` whole GPUs,
``NumberOfCpuCoresRequired`` cores and ``MinMemoryRequiredInMb`` of host memory per copy;
SageMaker places a copy only where all three are free. GPU kinds and counts come from the one
table of facts (``infra.facts.hardware``); host vCPUs and memory are below, with their sources.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws.sagemaker.instances import PREFIX
from infra.config import check_choice, qualify
from infra.facts import hardware as facts
from tdk.errors import ConfigError

#: EC2 accelerated-computing sizes: (vCPUs, host memory GiB), from the one hardware table
HOST: dict[str, dict[str, tuple[int, int]]] = {
    family: dict(row.host) for family, row in aws_catalog.EC2_GPU_FAMILIES.items()
}

#: Our planning assumptions (not AWS facts): the share of host memory and of each GPU's
#: memory a copy may plan on (the rest is the platform's and the CUDA context's), how much
#: larger than its .tar.gz a model is in GPU memory (weights plus activations and workspace)
#: and in host memory while it loads, and Triton's own host memory per copy.
USABLE_FRACTION = 0.9
GPU_EXPANSION = 3.0
HOST_EXPANSION = 2.0
TRITON_HOST_MB = 1024
MEMORY_STEP_MB = 256
#: MinMemoryRequiredInMb >= 128 (botocore MemoryInMb shape, checked 2026-11-24)
MIN_MEMORY_MB = 128


@dataclass(frozen=True)
class IcInstance:
    """An instance type that can host inference components: its GPUs and host resources."""

    instance_type: str
    gpu: str
    gpus: int
    gpu_memory_mb: int
    vcpus: int
    memory_mb: int

    @property
    def usable_memory_mb(self) -> int:
        return int(self.memory_mb * USABLE_FRACTION)


def instance_types() -> list[str]:
    """Every GPU instance type this target knows the facts of."""
    return [
        f"ml.{family}.{size}"
        for family, sizes in HOST.items()
        for size in sizes
        if size in aws_catalog.EC2_GPU_FAMILIES[family].gpus
    ]


def ic_instance(key: str, instance_type: str) -> IcInstance:
    """The facts of ``instance_type``; ConfigError listing the known types otherwise."""
    family, size = aws_catalog.ec2_family(instance_type, PREFIX)
    if instance_type.startswith(PREFIX) and family[:1] in "cmrt":
        raise ConfigError(
            f"{qualify(key)} is {instance_type!r}, a CPU instance type: this target reserves "
            "whole GPUs for each copy (NumberOfAcceleratorDevicesRequired)",
            hint=f"`pulumi config set {qualify(key)} ml.g5.xlarge`, or serve CPU models with "
            "the sagemaker target",
        )
    why = aws_catalog.UNSUPPORTED_GPU_FAMILIES.get(family, "no GPU/host facts for it")
    check_choice(key, instance_type, instance_types(), why=why)
    kind = aws_catalog.EC2_GPU_FAMILIES[family]
    vcpus, memory_gib = HOST[family][size]
    return IcInstance(
        instance_type=instance_type,
        gpu=kind.gpu,
        gpus=kind.gpus[size],
        gpu_memory_mb=facts.GPUS[kind.gpu].memory_gib * 1024,
        vcpus=vcpus,
        memory_mb=memory_gib * 1024,
    )


@dataclass(frozen=True)
class Requirements:
    """What one copy reserves (the API's ComputeResourceRequirements)."""

    accelerators: int
    cpu_cores: float
    memory_mb: int


def derived_accelerators(size_bytes: int, instance: IcInstance) -> int:
    """Whole GPUs a copy needs: its GPU working set over each GPU's usable memory (>= 1)."""
    working_mb = size_bytes * GPU_EXPANSION / facts.MIB
    return max(1, math.ceil(working_mb / (instance.gpu_memory_mb * USABLE_FRACTION)))


def derived_memory_mb(size_bytes: int) -> int:
    """Host memory a copy needs while it loads and serves, rounded up to 256 MB steps."""
    needed = size_bytes * HOST_EXPANSION / facts.MIB + TRITON_HOST_MB
    return max(MIN_MEMORY_MB, math.ceil(needed / MEMORY_STEP_MB) * MEMORY_STEP_MB)


def requirements(
    where: str,
    size_bytes: int,
    instance: IcInstance,
    accelerators: int | None = None,
    memory_mb: int | None = None,
    cpu_cores: float = 1.0,
) -> Requirements:
    """A copy's reservation (overrides win over derived values); ConfigError naming ``where``
    when one copy cannot fit on one instance at all."""
    need = Requirements(
        accelerators if accelerators else derived_accelerators(size_bytes, instance),
        cpu_cores,
        memory_mb if memory_mb else derived_memory_mb(size_bytes),
    )
    problems = []
    if need.accelerators > instance.gpus:
        problems.append(
            f"{need.accelerators} GPUs but {instance.instance_type} has {instance.gpus}"
        )
    if need.memory_mb > instance.usable_memory_mb:
        problems.append(
            f"{need.memory_mb} MB of host memory but {instance.instance_type} offers "
            f"{instance.usable_memory_mb} MB"
        )
    if need.cpu_cores > instance.vcpus:
        problems.append(
            f"{need.cpu_cores:g} CPU cores but {instance.instance_type} has {instance.vcpus}"
        )
    if problems:
        raise ConfigError(
            f"{where}: one copy needs {'; '.join(problems)}",
            hint="pick a larger sagemakerIcInstanceType, or override accelerators / memoryMb / "
            "cpuCores for these copies in sagemakerIcModels",
        )
    return need


def instances_needed(demands: Sequence[tuple[Requirements, int]], instance: IcInstance) -> int:
    """Instances of ``instance`` that ``copies`` of each reservation need at least: GPUs,
    cores and host memory summed over the copies, each against one instance's (a copy never
    spans instances; a component's copies may share one)."""
    gpus = sum(need.accelerators * copies for need, copies in demands)
    cores = sum(need.cpu_cores * copies for need, copies in demands)
    memory = sum(need.memory_mb * copies for need, copies in demands)
    return max(
        math.ceil(gpus / instance.gpus),
        math.ceil(cores / instance.vcpus),
        math.ceil(memory / instance.usable_memory_mb),
    )


def describe_demand(demands: Sequence[tuple[Requirements, int]], instance: IcInstance) -> str:
    """``3 copies need 3 GPUs, 3 cores, 3840 MB`` for messages."""
    copies = sum(c for _, c in demands)
    gpus = sum(n.accelerators * c for n, c in demands)
    cores = sum(n.cpu_cores * c for n, c in demands)
    memory = sum(n.memory_mb * c for n, c in demands)
    return (
        f"{copies} copies reserve {gpus} GPUs, {cores:g} CPU cores and {memory} MB "
        f"(one {instance.instance_type}: {instance.gpus} GPUs, {instance.vcpus} cores, "
        f"{instance.usable_memory_mb} MB usable)"
    )
