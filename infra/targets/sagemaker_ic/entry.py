"""The sagemaker-ic target's registry entry: SageMaker inference components."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.registry import PLAN, StackSettings, TargetEntry

if TYPE_CHECKING:
    from infra.targets.checks import TargetSpec

INSTANCE_KEY = "sagemakerIcInstanceType"
PREFIX = "ml."


class SageMakerIcEntry(TargetEntry):
    name = "sagemaker-ic"
    summary = "SageMaker inference components, one Triton container per model copy"
    deploy_module = "infra.targets.sagemaker_ic.target"
    client_module = "infra.targets.sagemaker_ic.client"
    cannot: ClassVar[dict[str, str]] = {
        PLAN: "its scaling is per model copy: compare it with `tdk plan --components RELEASE`"
    }
    #: what `tdk plan --components` prices components on by default
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("ml.g4dn.xlarge", "ml.g5.xlarge")
    price_section = "sagemaker"

    def spec(self, instance_type: str, gpu: str, image: str) -> TargetSpec:
        from infra.targets.checks import instance_spec

        del gpu
        return instance_spec(self.name, instance_type, image, prefix=PREFIX, cpu=True)

    def stack_spec(self, stack: StackSettings) -> TargetSpec:
        return self.spec(stack.get(INSTANCE_KEY), "", stack.get("sagemakerTritonVersion"))

    def owns(self, unit: str) -> bool:
        return unit.startswith(PREFIX)


ENTRY = SageMakerIcEntry()
