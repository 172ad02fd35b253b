"""Rendered KEDA and Managed Prometheus objects of the committed stacks validate against the
vendored CRD schemas (tests/infra/crd_schemas/README.md names their source and version)."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.infra.pulumi_harness import run_stack
from tests.registry_lists import dev_stack, kubernetes_targets

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
#: what every Kubernetes target declares: KEDA scales each workload
KEDA_KINDS = {kind for kind in KINDS if ":keda.sh/" in kind}


def _schema(resource_type: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / KINDS[resource_type]).read_text())
    return schema


def _objects(stack: str) -> list[tuple[str, dict[str, Any]]]:
    run = run_stack(stack)
    return [(r.type, r.inputs) for r in run.resources if r.type in KINDS]


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-11-24")


@cache
def _declared(target: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(_objects(dev_stack(target)))


@pytest.mark.parametrize("target", kubernetes_targets())
def test_rendered_custom_resources_validate(target: str) -> None:
    """Every registered Kubernetes target's committed stack: KEDA's objects, and any other
    custom resource with a vendored schema, validate."""
    objects = _declared(target)
    assert {t for t, _ in objects} >= KEDA_KINDS
    for resource_type, body in objects:
        jsonschema.validate(body, _schema(resource_type))


def test_every_vendored_schema_is_used_by_a_registered_target() -> None:
    """A schema no committed stack renders validates nothing: drop it, or the target that
    declared its kind is gone."""
    used = {t for target in kubernetes_targets() for t, _ in _declared(target)}
    assert set(KINDS) == used


def test_a_broken_scaled_object_fails() -> None:
    any_target = kubernetes_targets()[0]
    ((_, body),) = [o for o in _declared(any_target) if o[0].endswith("ScaledObject")]
    broken = copy.deepcopy(body)
    broken["spec"]["minReplicaCount"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema("kubernetes:keda.sh/v1alpha1:ScaledObject"))
    typo = copy.deepcopy(body)
    typo["spec"]["scaleTargetRef"]["nmae"] = typo["spec"]["scaleTargetRef"].pop("name")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(typo, _schema("kubernetes:keda.sh/v1alpha1:ScaledObject"))
