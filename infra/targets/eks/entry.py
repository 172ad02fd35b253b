"""The eks target's registry entry: an EKS GPU node group running Triton, scaled by KEDA."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.k8s_entry import KubernetesEntry
from infra.targets.registry import PlanUnit, Quote, StackSettings

if TYPE_CHECKING:
    from infra.perf.plan import Candidate
    from infra.targets.checks import TargetSpec

INSTANCE_KEY = "eksGpuInstanceType"


class EksEntry(KubernetesEntry):
    name = "eks"
    summary = "EKS GPU node group running Triton, autoscaled by KEDA on Triton's metrics"
    deploy_module = "infra.targets.eks.target"
    client_module = "infra.targets.eks.client"
    region_key = "aws:region"
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("g4dn.xlarge", "g5.xlarge", "g6.xlarge")
    node_keys = ("eksGpuNodesMin", "eksGpuNodesMax")

    def spec(self, instance_type: str, gpu: str, image: str) -> TargetSpec:
        from infra.targets.checks import instance_spec

        del gpu
        return instance_spec(self.name, instance_type, image)

    def stack_spec(self, stack: StackSettings) -> TargetSpec:
        return self.spec(stack.get(INSTANCE_KEY), "", stack.get("k8sTritonImage"))

    def owns(self, unit: str) -> bool:
        return not unit.startswith("ml.") and "+" not in unit

    def candidate(self, quote: Quote) -> Candidate:
        from infra.perf.plan import Candidate

        price = quote.prices.lookup("ec2", quote.region, quote.spec)
        gpus = max(1, price.gpus)
        return Candidate(quote.spec, quote.unit_rps, gpus, price.usd_per_hour, quote.measured)

    def plan_unit(self, stack: StackSettings) -> PlanUnit:
        return PlanUnit(stack.get(self.region_key), stack.get(INSTANCE_KEY))


ENTRY = EksEntry()
