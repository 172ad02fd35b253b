"""The custom resources kubernetes-validate has no schema for (KEDA, Managed Prometheus),
checked strictly against the fields their CRDs document (KEDA 2.16, monitoring.googleapis.com/v1).

Unknown fields fail (``additionalProperties: false``), as the API server's structural schema
pruning would silently drop them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jsonschema
import pytest

from infra.k8s import manifests
from infra.k8s.spec import PrometheusSource
from tests.infra.test_k8s_manifests import make_spec


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
METADATA = {
    "type": "object",
    "required": ["name", "namespace"],
    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
}

SCALED_OBJECT = _object(
    {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": METADATA,
        "spec": _object(
            {
                "scaleTargetRef": _object(
                    {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "name": {"type": "string"},
                        "envSourceContainerName": {"type": "string"},
                    },
                    ("name",),
                ),
                "pollingInterval": {"type": "integer", "minimum": 1},
                "cooldownPeriod": {"type": "integer", "minimum": 0},
                "initialCooldownPeriod": {"type": "integer"},
                "idleReplicaCount": {"type": "integer"},
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "fallback": {"type": "object"},
                "advanced": {"type": "object"},
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": _object(
                        {
                            "type": {"type": "string"},
                            "name": {"type": "string"},
                            "metadata": STRING_MAP,
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "useCachedMetrics": {"type": "boolean"},
                            "authenticationRef": _object(
                                {"name": {"type": "string"}, "kind": {"type": "string"}}, ("name",)
                            ),
                        },
                        ("type", "metadata"),
                    ),
                },
            },
            ("scaleTargetRef", "triggers"),
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)

TRIGGER_AUTHENTICATION = _object(
    {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "TriggerAuthentication"},
        "metadata": METADATA,
        "spec": _object(
            {
                "podIdentity": _object(
                    {
                        "provider": {"enum": ["none", "azure-workload", "aws", "aws-eks", "gcp"]},
                        "identityId": {"type": "string"},
                        "roleArn": {"type": "string"},
                        "identityOwner": {"enum": ["keda", "workload"]},
                    },
                    ("provider",),
                ),
                "secretTargetRef": {"type": "array"},
                "env": {"type": "array"},
            }
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)

POD_MONITORING = _object(
    {
        "apiVersion": {"const": "monitoring.googleapis.com/v1"},
        "kind": {"const": "PodMonitoring"},
        "metadata": METADATA,
        "spec": _object(
            {
                "selector": _object(
                    {"matchLabels": STRING_MAP, "matchExpressions": {"type": "array"}}
                ),
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": _object(
                        {
                            "port": {"type": ["string", "integer"]},
                            "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                            "path": {"type": "string"},
                            "scheme": {"enum": ["http", "https"]},
                            "timeout": {"type": "string"},
                            "params": {"type": "object"},
                            "metricRelabeling": {"type": "array"},
                        },
                        ("port",),
                    ),
                },
                "targetLabels": {"type": "object"},
                "limits": {"type": "object"},
                "filterRunning": {"type": "boolean"},
            },
            ("selector", "endpoints"),
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)

SCHEMAS = {
    "ScaledObject": SCALED_OBJECT,
    "TriggerAuthentication": TRIGGER_AUTHENTICATION,
    "PodMonitoring": POD_MONITORING,
}


@pytest.mark.parametrize("cloud", ["gke", "eks"])
def test_custom_resources_match_their_crd_fields(cloud: str) -> None:
    spec = make_spec(cloud=cloud)
    if cloud == "eks":
        spec = dataclasses.replace(
            spec, prometheus=PrometheusSource("https://aps", "aws", "eu-west-1")
        )
    custom = [m for m in manifests.workload_manifests(spec) if m["kind"] in SCHEMAS]
    assert {m["kind"] for m in custom} >= {"ScaledObject", "TriggerAuthentication"}
    for manifest in custom:
        jsonschema.validate(manifest, SCHEMAS[manifest["kind"]])


def test_a_misplaced_keda_field_is_rejected() -> None:
    scaled = manifests.scaled_object(make_spec())
    scaled["spec"]["triggers"][0]["threshold"] = "0.5"  # belongs under metadata
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(scaled, SCALED_OBJECT)
    scaled = manifests.scaled_object(make_spec())
    scaled["spec"]["triggers"][0]["metadata"]["threshold"] = 0.5  # KEDA wants strings
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(scaled, SCALED_OBJECT)
