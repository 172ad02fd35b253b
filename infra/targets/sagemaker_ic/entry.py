"""The sagemaker-ic target's registry entry: SageMaker inference components."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

from infra.clouds.aws.machine import CLOUD
from infra.sagemaker_common.instances import NO_ENGINE_IMAGE
from infra.targets.capabilities import LLM_ENGINES, PLAN
from infra.targets.entry import TargetEntry
from infra.targets.sagemaker_ic.names import TARGET_NAME

if TYPE_CHECKING:
    from infra.planning.pricing import PriceTable
    from packager.repository import ModelDir

INSTANCE_KEY = "sagemakerIcInstanceType"


class SageMakerIcEntry(TargetEntry):
    name = TARGET_NAME
    order = 20
    summary = "SageMaker inference components, one Triton container per model copy"
    deploy_module = "infra.targets.sagemaker_ic.target"
    client_module = "infra.targets.sagemaker_ic.client"
    cloud = CLOUD
    cannot: ClassVar[dict[str, str]] = {
        PLAN: "its scaling is per model copy: compare it with `tdk plan --components RELEASE`",
        LLM_ENGINES: NO_ENGINE_IMAGE,
    }
    #: what `tdk plan --components` prices components on by default
    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("ml.g4dn.xlarge", "ml.g5.xlarge")
    flag_defaults: ClassVar[dict[str, str]] = {"aws:region": "us-east-1"}
    flag_keys: ClassVar[dict[str, str]] = {
        "instance_type": INSTANCE_KEY,
        "image": "sagemakerTritonVersion",
    }

    def model_values(self, models: list[ModelDir]) -> dict[str, str]:
        """One component per model that is not an ensemble step of another, sized by its
        files (an ensemble's with its steps'), as ``sagemakerIcModels`` declares them."""
        from infra.targets.checks import serving_units

        groups = [
            {"copies": [model.name], "sizeMb": max(1, -(-size // 2**20))}
            for model, size in serving_units(models)
        ]
        return {"sagemakerIcModels": json.dumps(groups)} if groups else {}

    def prices(self) -> PriceTable:
        """AWS's table (``infra/clouds/aws/prices.json``), section ``sagemaker``: what
        ``tdk plan --components`` prices components on."""
        from infra.clouds.aws import prices

        return prices.load()

    def owns(self, unit: str) -> bool:
        """An instance type whose GPU and host facts this target has (``sizing.HOST``)."""
        from infra.targets.sagemaker_ic.sizing import instance_types

        return unit in instance_types()


ENTRY = SageMakerIcEntry()
