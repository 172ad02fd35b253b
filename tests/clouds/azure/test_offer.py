"""What an Azure GPU VM size offers (infra/clouds/azure/offer.py): its GPUs and the driver AKS
installs on it, which the engine image is checked against."""

from __future__ import annotations

from infra.clouds.azure import catalog
from infra.clouds.azure.offer import vm_size_spec


def test_a_vm_size_offers_its_gpus_and_its_node_driver() -> None:
    size = catalog.SIZES["Standard_NC64as_T4_v3"]
    spec = vm_size_spec("aks", size, "nvcr.io/nvidia/tritonserver:26.05-py3")
    assert (spec.label, spec.gpus, spec.gpu) == ("Standard_NC64as_T4_v3", 4, size.gpu)
    assert spec.node_driver == catalog.node_driver("Standard_NC64as_T4_v3")
    assert not spec.mme and spec.image_name.endswith("26.05-py3")


def test_a_grid_size_gets_the_grid_driver_not_the_cuda_one() -> None:
    grid = vm_size_spec("aks", catalog.SIZES["Standard_NV36ads_A10_v5"], "")
    cuda = vm_size_spec("aks", catalog.SIZES["Standard_NC4as_T4_v3"], "")
    assert grid.node_driver is not None and cuda.node_driver is not None
    assert grid.node_driver.version != cuda.node_driver.version
