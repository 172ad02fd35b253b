"""The sagemaker-ic target's registry entry: SageMaker inference components."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clouds.aws.machine import CLOUD
from infra.clouds.aws.sagemaker.instances import NO_ENGINE_IMAGE
from infra.targets.capabilities import LLM_ENGINES, Refused
from infra.targets.entry import Lazy, TargetEntry
from infra.targets.ports import ComparedLoad, ComparePort, ValidatePort
from infra.targets.sagemaker_ic.config import INSTANCE_KEY

if TYPE_CHECKING:
    from infra.planning.pricing import PriceTable
    from infra.planning.report import Candidate
    from infra.targets.base import Target
    from infra.targets.operations import Locator
    from packager.manifest import ManifestModel
    from packager.repository import ModelDir


class ComponentsCompare(ComparePort):
    """``tdk plan --components RELEASE``: inference components (one container per model copy)
    against MME on each instance type, then the baseline. Its instance types are those whose
    GPU and host facts this target has (``sizing.HOST``)."""

    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("ml.g4dn.xlarge", "ml.g5.xlarge")

    def rows(
        self,
        models: list[ManifestModel],
        load: ComparedLoad,
        specs: list[str],
        table: PriceTable,
        baseline: Candidate | None,
        streamed: bool,
    ) -> list[dict[str, object]]:
        from infra.targets.sagemaker_ic.plan import Load, ModelSize, compare
        from infra.targets.sagemaker_ic.sizing import instance_types

        sizes = [ModelSize(m.name, m.size, bool(m.mme_left_out)) for m in models]
        owned = instance_types()
        types = [s.partition(":")[0] for s in specs if s.partition(":")[0] in owned]
        types = types or list(self.default_candidates)
        at = Load(load.peak_rps, load.hot or len(sizes), load.unit_rate, load.safety)
        rows = compare(sizes, at, types, self.default_region, table, baseline, streamed)
        return [row.as_dict(load.peak_rps) for row in rows]


class ComponentsValidate(ValidatePort):
    def model_values(self, models: list[ModelDir]) -> dict[str, str]:
        """One component per model that is not an ensemble step of another, sized by its
        files (an ensemble's with its steps'), as ``sagemakerIcModels`` declares them."""
        from infra.targets.checks import serving_units

        groups = [
            {"copies": [model.name], "sizeMb": max(1, -(-size // 2**20))}
            for model, size in serving_units(models)
        ]
        return {"sagemakerIcModels": json.dumps(groups)} if groups else {}


def _program() -> Target[Any]:
    """The Pulumi program: imported when asked (it imports Pulumi and the cloud providers)."""
    from infra.targets.sagemaker_ic.target import TARGET

    return TARGET


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.sagemaker_ic.client import LOCATOR

    return LOCATOR


class SageMakerIcEntry(TargetEntry):
    name = "sagemaker-ic"
    order = 20
    summary = "SageMaker inference components, one Triton container per model copy"
    deploy = Lazy(_program)
    locator = Lazy(_locator)
    cloud = CLOUD
    plan = Refused("its scaling is per model copy: compare it with `tdk plan --components RELEASE`")
    validate = ComponentsValidate(
        {"instance_type": INSTANCE_KEY, "image": "sagemakerTritonVersion"},
        {"aws:region": "us-east-1"},
    )
    compare = ComponentsCompare()
    cannot_serve: ClassVar[dict[str, Refused]] = {LLM_ENGINES: Refused(NO_ENGINE_IMAGE)}


ENTRY = SageMakerIcEntry()
