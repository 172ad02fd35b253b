"""The sagemaker-ic target's registry entry: SageMaker inference components."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

from infra.clouds.aws.machine import CLOUD
from infra.sagemaker_common.instances import NO_ENGINE_IMAGE
from infra.targets.capabilities import LLM_ENGINES, Refused
from infra.targets.entry import TargetEntry
from infra.targets.ports import ValidatePort
from infra.targets.sagemaker_ic.names import TARGET_NAME

if TYPE_CHECKING:
    from packager.repository import ModelDir

INSTANCE_KEY = "sagemakerIcInstanceType"


class ComponentsPlan:
    """What ``tdk plan --components RELEASE`` prices inference components on: the region and
    instance types by default, and which types are this target's (its ``sizing.HOST``)."""

    default_region = "us-east-1"
    default_candidates: ClassVar[tuple[str, ...]] = ("ml.g4dn.xlarge", "ml.g5.xlarge")

    def owns(self, unit: str) -> bool:
        """An instance type whose GPU and host facts this target has (``sizing.HOST``)."""
        from infra.targets.sagemaker_ic.sizing import instance_types

        return unit in instance_types()


#: the components comparison of ``tdk plan --components`` (the target itself does not plan)
COMPONENTS = ComponentsPlan()


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


class SageMakerIcEntry(TargetEntry):
    name = TARGET_NAME
    order = 20
    summary = "SageMaker inference components, one Triton container per model copy"
    deploy_module = "infra.targets.sagemaker_ic.target"
    client_module = "infra.targets.sagemaker_ic.client"
    cloud = CLOUD
    plan = Refused("its scaling is per model copy: compare it with `tdk plan --components RELEASE`")
    validate = ComponentsValidate(
        {"instance_type": INSTANCE_KEY, "image": "sagemakerTritonVersion"},
        {"aws:region": "us-east-1"},
    )
    cannot_serve: ClassVar[dict[str, Refused]] = {LLM_ENGINES: Refused(NO_ENGINE_IMAGE)}


ENTRY = SageMakerIcEntry()
