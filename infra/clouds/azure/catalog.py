"""Azure GPU VM sizes an AKS GPU node pool can run Triton on: their GPUs, GPU memory and
compute capability, and the host. Pure data, each row sourced and dated.

Sources (checked 2026-11-27):
- GPUs per size, GPU model and memory, vCPUs and host memory: Microsoft's size series pages
  (MicrosoftDocs/azure-compute-docs ``articles/virtual-machines/sizes/gpu-accelerated/``:
  ``includes/ncast4v3-series-specs.md`` "Nvidia Tesla T4 GPU (16GB)", 4-64 vCPUs, 28-440 GiB;
  ``nvadsa10v5-series.md`` accelerators table (1/6, 1/3, 1/2, 1, 1, 2 A10 with 4, 8, 12, 24,
  24, 48 GB); ``includes/nca100v4-series-specs.md`` "Nvidia PCIe A100 GPU (80GB)";
  ``includes/ncadsh100v5-series-specs.md`` "Nvidia PCIe H100 GPU (94GB)" (H100 NVL), 40-80
  vCPUs, 320-640 GiB; ``includes/ndh100v5-series-specs.md`` 96 vCPUs, 1,900 GiB, "8 GPUs,
  Nvidia H100 GPU (80GB)"). Per-size vCPUs and memory of the T4, A100 and H100 sizes as
  microsoft/aspire lists them (``src/Aspire.Hosting.Azure.Kubernetes/AksNodeVmSizes.cs`` at
  5bd693a, generated from Azure Resource SKUs), which agree with the ranges above.
- Compute capability: developer.nvidia.com/cuda-gpus (T4 7.5, A10 8.6, A100 8.0, H100 9.0).
- AKS GPU node pools: MicrosoftDocs/azure-aks-docs ``articles/aks/use-nvidia-gpu.md`` (at
  fb060ab): "use a minimum size of Standard_NC4as_T4_v3"; AMD NVv4 is not supported.

Fractional A10 sizes (Standard_NV6/12/18ads_A10_v5) are refused, not approximated: each is a
share of one A10 (1/6, 1/3, 1/2) handed to the VM as an NVIDIA GRID vGPU with 4, 8 or 12 GB;
the kit's feasibility check reasons in whole GPUs per pod (``nvidia.com/gpu``), and a share
with a third of the memory would be counted as a whole 24 GB A10.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from infra.facts import Source
from infra.facts.drivers import NodeDriver
from infra.facts.hardware import Gpu

CHECKED = dt.date(2026, 11, 27)
SIZES_SOURCE = Source(
    "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nc-family",
    CHECKED,
)
AKS_GPU_SOURCE = Source("https://learn.microsoft.com/azure/aks/use-nvidia-gpu", CHECKED)

#: the GPUs of the Azure sizes below (memory in GiB as the size pages state it)
T4 = Gpu("T4", 16, (7, 5))
A10 = Gpu("A10", 24, (8, 6))
A100_80GB = Gpu("A100-80GB", 80, (8, 0))
H100_NVL = Gpu("H100-NVL", 94, (9, 0))
H100 = Gpu("H100", 80, (9, 0))


@dataclass(frozen=True)
class VmSize:
    """One Azure GPU VM size: its series, GPU kind and count, and host (vCPUs, GiB)."""

    name: str
    series: str
    gpu: Gpu
    gpus: int
    vcpus: int
    memory_gib: int


def _series(series: str, gpu: Gpu, rows: tuple[tuple[str, int, int, int], ...]) -> list[VmSize]:
    return [VmSize(name, series, gpu, gpus, cpus, mem) for name, gpus, cpus, mem in rows]


SIZES: dict[str, VmSize] = {
    size.name: size
    for size in (
        *_series("NCasT4_v3", T4, (
            ("Standard_NC4as_T4_v3", 1, 4, 28),
            ("Standard_NC8as_T4_v3", 1, 8, 56),
            ("Standard_NC16as_T4_v3", 1, 16, 110),
            ("Standard_NC64as_T4_v3", 4, 64, 440),
        )),
        *_series("NVadsA10_v5", A10, (
            ("Standard_NV36ads_A10_v5", 1, 36, 440),
            ("Standard_NV36adms_A10_v5", 1, 36, 880),
            ("Standard_NV72ads_A10_v5", 2, 72, 880),
        )),
        *_series("NC_A100_v4", A100_80GB, (
            ("Standard_NC24ads_A100_v4", 1, 24, 220),
            ("Standard_NC48ads_A100_v4", 2, 48, 440),
            ("Standard_NC96ads_A100_v4", 4, 96, 880),
        )),
        *_series("NCads_H100_v5", H100_NVL, (
            ("Standard_NC40ads_H100_v5", 1, 40, 320),
            ("Standard_NC80adis_H100_v5", 2, 80, 640),
        )),
        *_series("ND_H100_v5", H100, (("Standard_ND96isr_H100_v5", 8, 96, 1900),)),
    )
}  # fmt: skip

#: sizes refused outright, each with why (``AksTarget.refusals`` turns them into refusals)
_FRACTION = (
    "a {share} share of one NVIDIA A10 ({memory} GB) through GRID vGPU: the kit places "
    "models on whole GPUs per pod, so it would count the share as a whole 24 GB A10"
)
REFUSED: dict[str, str] = {
    "Standard_NV6ads_A10_v5": _FRACTION.format(share="1/6", memory=4),
    "Standard_NV12ads_A10_v5": _FRACTION.format(share="1/3", memory=8),
    "Standard_NV18ads_A10_v5": _FRACTION.format(share="1/2", memory=12),
    "Standard_NV*as_v4": "AMD Radeon Instinct MI25 GPUs: no CUDA, and AKS does not support "
    "the NVv4 series (use-nvidia-gpu)",
}
#: what hints offer (the Pulumi.yaml default): AKS's documented minimum GPU size
SUGGESTED = "Standard_NC4as_T4_v3"


def size(name: str) -> VmSize | None:
    """The row of ``name`` (Azure answers sizes case-insensitively; the table is canonical)."""
    found = SIZES.get(name)
    if found is not None:
        return found
    folded = name.lower()
    return next((s for s in SIZES.values() if s.name.lower() == folded), None)


#: The NVIDIA driver AKS installs on a GPU node (``gpuProfile.driver: Install``), read
#: 2026-12-07 from Azure/AgentBaker at 06836ee (2026-08-21): ``GetGPUDriverVersion`` in
#: ``pkg/agent/baker.go`` gives the GRID driver (image aks-gpu-grid) to the sizes of
#: ``ConvergedGPUDriverSizes`` (``pkg/agent/datamodel/gpu_components.go``: the A10 sizes) and
#: the R580 LTS CUDA driver (aks-gpu-cuda-lts) to the compute sizes (T4, A100, H100); the
#: versions are ``parts/common/components.json``'s ``GPUContainerImages`` latestVersion. A
#: node image built later may carry a newer driver.
AKS_DRIVER_SOURCE = (
    "https://github.com/Azure/AgentBaker/blob/06836ee2301e362039418c3a7ed0fe6004a641fd/"
    "parts/common/components.json and pkg/agent/baker.go GetGPUDriverVersion"
)
AKS_CUDA_LTS_DRIVER = "580.159.04"
AKS_GRID_DRIVER = "570.211.01"
#: AgentBaker's ConvergedGPUDriverSizes (lower-cased, as it compares them)
AKS_GRID_SIZES = frozenset({
    "standard_nv6ads_a10_v5", "standard_nv12ads_a10_v5", "standard_nv18ads_a10_v5",
    "standard_nv36ads_a10_v5", "standard_nv72ads_a10_v5", "standard_nv36adms_a10_v5",
    "standard_nc8ads_a10_v4", "standard_nc16ads_a10_v4", "standard_nc32ads_a10_v4",
})  # fmt: skip


def node_driver(size: str) -> NodeDriver:
    """The driver AKS installs on a node of VM ``size``, with its source."""
    version = AKS_GRID_DRIVER if size.lower() in AKS_GRID_SIZES else AKS_CUDA_LTS_DRIVER
    return NodeDriver(version, AKS_DRIVER_SOURCE)
