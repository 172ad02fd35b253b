"""The eks target's registry entry: an EKS GPU node group running Triton, scaled by KEDA."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws.machine import CLOUD
from infra.planning.pricing import PriceTable, Quote
from infra.targets.entry import PlanUnit, Stack
from infra.targets.k8s.entry import KubernetesEntry

if TYPE_CHECKING:
    from infra.planning.report import Candidate

INSTANCE_KEY = "eksGpuInstanceType"
IMAGE_KEY = "k8sTritonImage"


class EksEntry(KubernetesEntry):
    name = "eks"
    order = 40
    summary = "EKS GPU node group running Triton, autoscaled by KEDA on Triton's metrics"
    deploy_module = "infra.targets.eks.target"
    client_module = "infra.targets.eks.client"
    cloud = CLOUD
    region_key = "aws:region"
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("g4dn.xlarge", "g5.xlarge", "g6.xlarge")
    node_keys = ("eksGpuNodesMin", "eksGpuNodesMax")
    flag_defaults: ClassVar[dict[str, str]] = {
        "aws:region": "us-east-1",
        "releaseUrl": "s3://tdk-validate/release",
        "k8sApiOpenToInternet": "true",
    }
    flag_keys: ClassVar[dict[str, str]] = {"instance_type": INSTANCE_KEY, "image": IMAGE_KEY}

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

    def stack_location(self, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, str | None]:
        """The shared fields and, once deployed, the AMP workspace metrics read."""
        workspace = outputs.get("ampWorkspaceId")
        found = super().stack_location(stack, outputs)
        return {**found, "workspace_id": workspace if isinstance(workspace, str) else None}


ENTRY = EksEntry()
