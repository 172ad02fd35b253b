"""The sagemaker target's registry entry: SageMaker multi-model endpoints (MME)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws.machine import CLOUD
from infra.clouds.aws.sagemaker.instances import MME_DECOUPLED, NO_ENGINE_IMAGE
from infra.planning.pricing import PriceTable, Quote
from infra.targets.capabilities import DECOUPLED, LLM_ENGINES, Refused
from infra.targets.entry import Lazy, TargetEntry
from infra.targets.ports import PlanPort, PlanUnit, Stack, ValidatePort

if TYPE_CHECKING:
    from infra.planning.report import Candidate, Option, PlanReport
    from infra.targets.base import Target
    from infra.targets.operations import Locator

INSTANCE_KEY = "sagemakerInstanceType"
#: SageMaker instance types carry this prefix (``ml.g5.xlarge``)
PREFIX = "ml."


class SageMakerPlan(PlanPort):
    """One SageMaker instance type per candidate, priced from the ``sagemaker`` section."""

    region_key = "aws:region"
    #: prices and the plan default to this region (the AWS table's SageMaker section holds it)
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("ml.g4dn.xlarge", "ml.g5.xlarge")

    def owns(self, unit: str) -> bool:
        """A single-GPU SageMaker instance type MME accepts (``instances.GPU_FAMILIES``)."""
        from infra.clouds.aws.sagemaker.instances import single_gpu_types

        return unit in single_gpu_types()

    def prices(self) -> PriceTable:
        """AWS's table (``infra/clouds/aws/prices.json``), section ``sagemaker``."""
        from infra.clouds.aws import prices

        return prices.load()

    def candidate(self, quote: Quote) -> Candidate:
        from infra.clouds.aws.prices import SAGEMAKER
        from infra.planning.report import Candidate

        price = quote.prices.lookup(SAGEMAKER, quote.region, quote.spec)
        return Candidate(quote.spec, quote.unit_rps, 1, price.usd_per_hour, quote.measured)

    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        return {INSTANCE_KEY: unit.instance}

    def plan_unit(self, stack: Stack) -> PlanUnit:
        return PlanUnit(stack.get(self.region_key), stack.get(INSTANCE_KEY))

    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        from infra.planning.report import invocations_per_instance

        size = report.sizing(option)
        return {
            "sagemakerInvocationsPerInstance": invocations_per_instance(
                option.candidate.unit_rps, report.safety
            ),
            "sagemakerMinInstances": size.trough_instances,
            "sagemakerMaxInstances": size.peak_instances,
        }


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and the cloud providers)."""
    from infra.targets.sagemaker.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.sagemaker.client import LOCATOR

    return LOCATOR


class SageMakerEntry(TargetEntry):
    name = "sagemaker"
    order = 10
    summary = "SageMaker multi-model endpoint running the SageMaker Triton image"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    cloud = CLOUD
    plan = SageMakerPlan()
    validate = ValidatePort(
        {"instance_type": INSTANCE_KEY, "image": "sagemakerTritonVersion"},
        {"aws:region": "us-east-1"},
    )
    cannot_serve: ClassVar[dict[str, Refused]] = {
        DECOUPLED: Refused(MME_DECOUPLED),
        LLM_ENGINES: Refused(NO_ENGINE_IMAGE),
    }


ENTRY = SageMakerEntry()
