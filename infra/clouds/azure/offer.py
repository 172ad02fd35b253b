"""What an AKS node's GPU VM size offers a model (``TargetSpec``), from the Azure catalog
(``catalog.py``): its GPU and count, and the NVIDIA driver AKS installs on it. aks builds its
``offer`` with it."""

from __future__ import annotations

from infra.clouds.azure import catalog
from infra.values.offer import TargetSpec, image_facts


def vm_size_spec(target: str, size: catalog.VmSize, image: str) -> TargetSpec:
    """A node of VM size ``size`` running Triton ``image`` (no disk limit, no MME)."""
    return TargetSpec(
        target, size.name, size.gpu, 0, image_facts(image), mme=False, gpus=size.gpus,
        image_name=image, node_driver=catalog.node_driver(size.name),
    )  # fmt: skip
