"""A target that exists only in the tests: registered through ``TDK_EXTRA_TARGETS`` with no
edit outside this folder, it must appear in every ``--target``, in ``tdk plan``, in
``tdk validate --target``/``--stack`` and in ``tdk render k8s``."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from infra.facts.machine import Check, Cloud, Tool
from infra.planning.pricing import Quote
from infra.targets.entry import Lazy, TargetEntry
from infra.targets.ports import PlanPort, PlanUnit, Stack, ValidatePort

if TYPE_CHECKING:
    from infra.planning.report import Candidate, Option, PlanReport
    from infra.targets.base import Target
    from infra.targets.operations import Locator

#: the dummy's own instance kinds and their $/h (its own price table: no edit to prices.json)
PRICES = {"box.small": Decimal("0.50"), "box.large": Decimal("2.00")}


def _moon_credentials(env: Mapping[str, str]) -> Check:
    """The dummy's cloud finds its credentials in MOON_TOKEN (its own check: doctor knows no
    cloud)."""
    if env.get("MOON_TOKEN"):
        return Check(MOON_CLOUD, "credentials", "ok", "from MOON_TOKEN")
    return Check(MOON_CLOUD, "credentials", "missing", "no MOON_TOKEN", "export MOON_TOKEN")


MOON_CLOUD = "moon"
#: the dummy's cloud: its CLI and credentials, as a new cloud's target gives them
MOON = Cloud(
    MOON_CLOUD,
    Tool("moonctl", ("--version",), "https://moon.example/cli"),
    _moon_credentials,
    lambda: "the moon's own identity",
)


class DummyPlan(PlanPort):
    region_key = "triton-deploy-kit:dummyRegion"
    default_region = "moon-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("box.small", "box.large")

    def owns(self, unit: str) -> bool:
        return unit in PRICES

    def candidate(self, quote: Quote) -> Candidate:
        from infra.planning.report import Candidate

        return Candidate(quote.spec, quote.unit_rps, 1, PRICES[quote.spec], quote.measured)

    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        return {"dummyBox": unit.instance}

    def plan_unit(self, stack: Stack) -> PlanUnit:
        return PlanUnit(stack.get(self.region_key), stack.get("dummyBox"))

    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        size = report.sizing(option)
        return {"dummyMinBoxes": size.trough_instances, "dummyMaxBoxes": size.peak_instances}


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and the cloud providers)."""
    from tests.targets.dummy.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from tests.targets.dummy.client import LOCATOR

    return LOCATOR


class DummyEntry(TargetEntry):
    name = "dummy"
    summary = "a test-only target"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    cloud = MOON
    plan = DummyPlan()
    validate = ValidatePort({"instance_type": "dummyBox"})


ENTRY = DummyEntry()
