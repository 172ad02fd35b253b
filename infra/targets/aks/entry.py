"""The aks target's registry entry: an AKS GPU node pool running Triton, scaled by KEDA."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.azure.machine import CLOUD
from infra.k8s.entry import KubernetesEntry, KubernetesPlan
from infra.planning.pricing import PriceTable, Quote
from infra.targets.entry import Lazy
from infra.targets.ports import PlanUnit, Stack, ValidatePort
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.planning.report import Candidate
    from infra.targets.base import Target
    from infra.targets.operations import Locator

GPU_SIZE_KEY = "aksGpuVmSize"
IMAGE_KEY = "k8sTritonImage"


class AksPlan(KubernetesPlan):
    """One Azure GPU VM size per candidate, priced from the aks catalog's retail prices."""

    region_key = "azure-native:location"
    default_region = "eastus"
    default_candidates: ClassVar[tuple[str, ...]] = (
        "Standard_NC4as_T4_v3",
        "Standard_NV36ads_A10_v5",
        "Standard_NC24ads_A100_v4",
    )
    node_keys = ("aksGpuNodesMin", "aksGpuNodesMax")

    def owns(self, unit: str) -> bool:
        """An Azure GPU VM size of the aks catalog."""
        from infra.clouds.azure.catalog import size

        return size(unit) is not None

    def prices(self) -> PriceTable:
        """Azure's table (``infra/clouds/azure/prices.json``, from the Retail Prices API)."""
        from infra.clouds.azure import prices

        return prices.load()

    def candidate(self, quote: Quote) -> Candidate:
        """One AKS GPU node: its VM's Linux pay-as-you-go price (the ``azure_vm`` section of
        ``--prices`` when it has one, else ``infra/clouds/azure/prices.json``; the Free tier's
        control plane costs nothing)."""
        from infra.clouds.azure import catalog, prices
        from infra.planning.report import Candidate

        found = catalog.size(quote.spec)
        if found is None:
            raise UsageError(
                f"--instance-type {quote.spec!r} is not an Azure GPU VM size tdk knows",
                hint=f"use one of {', '.join(catalog.SIZES)}",
            )
        # a --prices table with an azure_vm section wins over the committed one
        table = quote.prices if prices.SECTION in quote.prices.sections else prices.load()
        price = table.lookup(prices.SECTION, quote.region, found.name)
        return Candidate(quote.spec, quote.unit_rps, found.gpus, price.usd_per_hour, quote.measured)

    def plan_unit(self, stack: Stack) -> PlanUnit:
        return PlanUnit(stack.get(self.region_key), stack.get(GPU_SIZE_KEY))

    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        return {GPU_SIZE_KEY: unit.instance}


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and the cloud providers)."""
    from infra.targets.aks.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.aks.client import LOCATOR

    return LOCATOR


class AksEntry(KubernetesEntry):
    name = "aks"
    order = 50
    summary = "AKS GPU node pool running Triton, autoscaled by KEDA on Triton's metrics"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    cloud = CLOUD
    plan = AksPlan()
    validate = ValidatePort(
        {"instance_type": GPU_SIZE_KEY, "image": IMAGE_KEY},
        {
            "azure-native:location": "eastus",
            "releaseUrl": "az://tdkvalidate/releases/release",
            "aksReleaseResourceGroup": "tdk-validate",
            "k8sApiOpenToInternet": "true",
        },
    )


ENTRY = AksEntry()
