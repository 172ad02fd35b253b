"""The dummy target's deploy contract: one config key, one ConfigMap to render."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.config import ConfigReader, StackConfig
from infra.targets.base import DoctorPort, Manifest, OutputValue, RenderPort, Target
from infra.values.offer import TargetSpec, image_facts

if TYPE_CHECKING:
    from infra.facts.findings import Finding


@dataclass(frozen=True)
class DummyConfig:
    common: StackConfig
    box: str
    #: a field whose name the Kubernetes targets use too: doctor judged it on the EKS calendar
    #: by that name ("1.30" raised KeyError); now only the target's own facts speak of it
    kubernetes_version: str = "1.30"


class DummyDoctor(DoctorPort[DummyConfig]):
    def facts(self, config: DummyConfig, today: dt.date) -> list[Finding]:
        from infra.facts.findings import Finding

        source = "https://moon.example/calendar"
        return [Finding("moon calendar", config.kubernetes_version, source, "2026-11-27", "ok")]


class DummyRender(RenderPort[DummyConfig]):
    def manifests(self, config: DummyConfig, output: OutputValue) -> list[Manifest]:
        return [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": config.common.name, "namespace": "dummy"},
                "data": {"box": config.box, "endpoint": output("dummyEndpoint")},
            }
        ]


class DummyTarget(Target[DummyConfig]):
    release_schemes = ("s3", "gs")
    render = DummyRender()
    doctor = DummyDoctor()

    def parse_config(self, reader: ConfigReader, common: StackConfig) -> DummyConfig:
        return DummyConfig(common, reader.choice("dummyBox", ("box.small", "box.large")))

    def offer(self, config: DummyConfig) -> TargetSpec:
        # a T4 with a 1 GB disk: big models do not fit, so the target's checks visibly run
        from infra.facts import hardware as facts

        return TargetSpec(
            config.common.target, config.box, facts.GPUS["T4"], 1, image_facts(), mme=False
        )

    def declare(self, config: DummyConfig) -> Mapping[str, Any]:
        return {"box": config.box}


TARGET = DummyTarget()
