"""The gke target's registry entry: a GKE GPU node pool running Triton, scaled by KEDA."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.gcp.machine import CLOUD
from infra.k8s.entry import KubernetesEntry, KubernetesPlan
from infra.planning.pricing import PriceTable, Quote
from infra.targets.entry import Lazy
from infra.targets.ports import PlanUnit, Stack, ValidatePort
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.planning.report import Candidate
    from infra.targets.base import Target
    from infra.targets.operations import Locator

#: a GKE serving unit is a node shape: MACHINE+ACCELERATOR (``g2-standard-8+nvidia-l4``)
SHAPE_SEPARATOR = "+"


class GkePlan(KubernetesPlan):
    """A GKE node shape MACHINE+GPU per candidate, priced as its machine plus its GPUs."""

    region_key = "gcp:region"
    default_region = "us-central1"
    default_candidates: ClassVar[tuple[str, ...]] = (
        "g2-standard-8+nvidia-l4",
        "n1-standard-4+nvidia-tesla-t4",
    )
    node_keys = ("gkeGpuNodesMin", "gkeGpuNodesMax")

    def owns(self, unit: str) -> bool:
        """A node shape MACHINE+ACCELERATOR whose accelerator the node pool supports."""
        from infra.targets.gke.builders import ACCELERATORS

        machine, plus, gpu = unit.partition(SHAPE_SEPARATOR)
        return bool(machine and plus) and gpu in ACCELERATORS

    def prices(self) -> PriceTable:
        """Google Cloud's table (``infra/clouds/gcp/prices.json``): machines and GPUs."""
        from infra.clouds.gcp import prices

        return prices.load()

    def candidate(self, quote: Quote) -> Candidate:
        from infra.clouds.gcp.prices import GPU, MACHINE
        from infra.planning.report import Candidate

        machine, gpu = _shape(quote.spec)
        prices, region, gpus = quote.prices, quote.region, quote.gpus_per_node
        node = prices.lookup(MACHINE, region, machine).usd_per_hour
        node += gpus * prices.lookup(GPU, region, gpu).usd_per_hour
        return Candidate(quote.spec, quote.unit_rps, gpus, node, quote.measured)

    def matches(self, spec: str, measured_on: str | None) -> bool:
        """A node shape was measured when its shape or its accelerator was."""
        return super().matches(spec, measured_on) or (
            spec.partition(SHAPE_SEPARATOR)[2] == measured_on
        )

    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        machine, gpu = _shape(unit.instance)
        gpus = str(unit.gpus_per_node)
        return {"gkeMachineType": machine, "gkeGpuType": gpu, "gkeGpusPerNode": gpus}

    def plan_unit(self, stack: Stack) -> PlanUnit:
        shape = f"{stack.get('gkeMachineType')}{SHAPE_SEPARATOR}{stack.get('gkeGpuType')}"
        gpus = int(stack.get("gkeGpusPerNode") or 1)
        return PlanUnit(stack.get(self.region_key), shape, gpus)


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and the cloud providers)."""
    from infra.targets.gke.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.gke.client import LOCATOR

    return LOCATOR


class GkeEntry(KubernetesEntry):
    name = "gke"
    order = 30
    summary = "GKE GPU node pool running Triton, autoscaled by KEDA on Triton's metrics"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    cloud = CLOUD
    plan = GkePlan()
    validate = ValidatePort(
        {"gpu": "gkeGpuType", "image": "k8sTritonImage"},
        {
            "gcp:project": "tdk-validate",
            "gcp:region": "us-central1",
            "releaseUrl": "gs://tdk-validate/release",
            "k8sApiOpenToInternet": "true",
        },
    )


def _shape(spec: str) -> tuple[str, str]:
    """(machine, accelerator) of a node shape MACHINE+GPU."""
    machine, plus, gpu = spec.partition(SHAPE_SEPARATOR)
    if not plus:
        raise UsageError(
            f"--instance-type {spec!r}: a GKE GPU node is MACHINE+GPU",
            hint="e.g. --instance-type g2-standard-8+nvidia-l4",
        )
    return machine, gpu


ENTRY = GkeEntry()
