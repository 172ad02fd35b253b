"""The eks target's registry entry: an EKS GPU node group running Triton, scaled by KEDA."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws.machine import CLOUD
from infra.k8s.entry import KubernetesEntry, KubernetesPlan
from infra.planning.pricing import PriceTable, Quote
from infra.targets.entry import Lazy
from infra.targets.ports import PlanUnit, Stack, ValidatePort

if TYPE_CHECKING:
    from infra.planning.report import Candidate
    from infra.targets.base import Target
    from infra.targets.operations import Locator

INSTANCE_KEY = "eksGpuInstanceType"
IMAGE_KEY = "k8sTritonImage"


class EksPlan(KubernetesPlan):
    """One EC2 GPU instance type per candidate, priced from the ``ec2`` section."""

    region_key = "aws:region"
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("g4dn.xlarge", "g5.xlarge", "g6.xlarge")
    node_keys = ("eksGpuNodesMin", "eksGpuNodesMax")

    def owns(self, unit: str) -> bool:
        """An EC2 instance type of a GPU family the node group supports."""
        from infra.targets.eks.builders import GPU_FAMILIES, split_instance

        family = split_instance(unit)
        return family is not None and family[0] in GPU_FAMILIES

    def prices(self) -> PriceTable:
        """AWS's table (``infra/clouds/aws/prices.json``), section ``ec2``."""
        from infra.clouds.aws import prices

        return prices.load()

    def candidate(self, quote: Quote) -> Candidate:
        from infra.clouds.aws.prices import EC2
        from infra.planning.report import Candidate

        price = quote.prices.lookup(EC2, quote.region, quote.spec)
        gpus = max(1, price.gpus)
        return Candidate(quote.spec, quote.unit_rps, gpus, price.usd_per_hour, quote.measured)

    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        return {INSTANCE_KEY: unit.instance}

    def plan_unit(self, stack: Stack) -> PlanUnit:
        return PlanUnit(stack.get(self.region_key), stack.get(INSTANCE_KEY))


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and the cloud providers)."""
    from infra.targets.eks.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.eks.client import LOCATOR

    return LOCATOR


class EksEntry(KubernetesEntry):
    name = "eks"
    order = 40
    summary = "EKS GPU node group running Triton, autoscaled by KEDA on Triton's metrics"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    cloud = CLOUD
    plan = EksPlan()
    validate = ValidatePort(
        {"instance_type": INSTANCE_KEY, "image": IMAGE_KEY},
        {
            "aws:region": "us-east-1",
            "releaseUrl": "s3://tdk-validate/release",
            "k8sApiOpenToInternet": "true",
        },
    )


ENTRY = EksEntry()
