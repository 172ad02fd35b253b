"""The sagemaker target's registry entry: SageMaker multi-model endpoints (MME)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.registry import PlanUnit, Quote, StackSettings, TargetEntry

if TYPE_CHECKING:
    from infra.perf.plan import Candidate, Option, PlanReport
    from infra.targets.checks import TargetSpec

INSTANCE_KEY = "sagemakerInstanceType"
#: SageMaker instance types carry this prefix (``ml.g5.xlarge``)
PREFIX = "ml."


class SageMakerEntry(TargetEntry):
    name = "sagemaker"
    summary = "SageMaker multi-model endpoint running the SageMaker Triton image"
    deploy_module = "infra.targets.sagemaker.target"
    client_module = "infra.targets.sagemaker.client"
    region_key = "aws:region"
    #: prices and the plan default to this region (prices.json's SageMaker section holds it)
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("ml.g4dn.xlarge", "ml.g5.xlarge")
    #: the prices table's section for this target's instances
    price_section = "sagemaker"

    def spec(self, instance_type: str, gpu: str, image: str) -> TargetSpec:
        from infra.targets.checks import instance_spec

        del gpu
        return instance_spec(self.name, instance_type, image, prefix=PREFIX, mme=True, cpu=True)

    def stack_spec(self, stack: StackSettings) -> TargetSpec:
        return self.spec(stack.get(INSTANCE_KEY), "", stack.get("sagemakerTritonVersion"))

    def owns(self, unit: str) -> bool:
        return unit.startswith(PREFIX)

    def candidate(self, quote: Quote) -> Candidate:
        from infra.perf.plan import Candidate

        price = quote.prices.lookup(self.price_section, quote.region, quote.spec)
        return Candidate(quote.spec, quote.unit_rps, 1, price.usd_per_hour, quote.measured)

    def plan_unit(self, stack: StackSettings) -> PlanUnit:
        return PlanUnit(stack.get(self.region_key), stack.get(INSTANCE_KEY))

    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        from infra.perf.plan import invocations_per_instance

        size = report.sizing(option)
        return {
            "sagemakerInvocationsPerInstance": invocations_per_instance(
                option.candidate.unit_rps, report.safety
            ),
            "sagemakerMinInstances": size.trough_instances,
            "sagemakerMaxInstances": size.peak_instances,
        }


ENTRY = SageMakerEntry()
