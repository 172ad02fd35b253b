"""Rendered KEDA and Managed Prometheus objects of the committed stacks validate against the
vendored CRD schemas (tests/infra/crd_schemas/README.md names their source and version)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.infra.pulumi_harness import run_stack

SCHEMAS = Path(__file__).with_name("crd_schemas")
KINDS = {
    "kubernetes:keda.sh/v1alpha1:ScaledObject": "keda.sh_scaledobject_v1alpha1.json",
    "kubernetes:keda.sh/v1alpha1:TriggerAuthentication": (
        "keda.sh_triggerauthentication_v1alpha1.json"
    ),
    "kubernetes:monitoring.googleapis.com/v1:PodMonitoring": (
        "monitoring.googleapis.com_podmonitoring_v1.json"
    ),
}


def _schema(resource_type: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / KINDS[resource_type]).read_text())
    return schema


def _objects(stack: str) -> list[tuple[str, dict[str, Any]]]:
    run = run_stack(stack)
    return [(r.type, r.inputs) for r in run.resources if r.type in KINDS]


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-11-24")


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        ("gke-dev", set(KINDS)),
        ("eks-dev", set(list(KINDS)[:2])),
        ("aks-dev", set(list(KINDS)[:2])),
    ],
)
def test_rendered_custom_resources_validate(stack: str, expected: set[str]) -> None:
    objects = _objects(stack)
    assert {t for t, _ in objects} == expected
    for resource_type, body in objects:
        jsonschema.validate(body, _schema(resource_type))


def test_a_broken_scaled_object_fails() -> None:
    ((_, body),) = [o for o in _objects("eks-dev") if o[0].endswith("ScaledObject")]
    broken = copy.deepcopy(body)
    broken["spec"]["minReplicaCount"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema("kubernetes:keda.sh/v1alpha1:ScaledObject"))
    typo = copy.deepcopy(body)
    typo["spec"]["scaleTargetRef"]["nmae"] = typo["spec"]["scaleTargetRef"].pop("name")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(typo, _schema("kubernetes:keda.sh/v1alpha1:ScaledObject"))
