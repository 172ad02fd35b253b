"""The custom resources kubernetes-validate has no schema for (KEDA, Managed Prometheus),
checked strictly against their CRDs' openAPIV3Schema.

The CRDs ship only in the Helm charts (no PyPI package carries them), so the schemas here are
hand-written, field for field from the CRDs of the pinned versions: kedacore/charts v2.16.1
(keda/templates/crds/crd-scaledobjects.yaml, crd-triggerauthentications.yaml) and
GoogleCloudPlatform/prometheus-engine (charts/operator/crds/monitoring.googleapis.com_
podmonitorings.yaml). Every property those CRDs declare at the levels we write is listed;
where we are stricter (metricType enum, positive polling) it is a documented constraint.
Unknown fields fail (``additionalProperties: false``), as the API server's structural schema
pruning would silently drop them.
"""

from __future__ import annotations

import jsonschema
import pytest

from infra.k8s import manifests
from infra.targets import load_target
from tests.infra.crd_fields import INTERVAL, STRING_MAP, non_empty_array, strict_object
from tests.infra.test_k8s_manifests import make_spec
from tests.registry_lists import kubernetes_targets, read_dev

METADATA = {
    "type": "object",
    "required": ["name", "namespace"],
    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
}

#: autoscaling/v2 HPAScalingRules, as the ScaledObject CRD embeds it
HPA_RULES = strict_object(
    {
        "policies": {"type": "array"},
        "selectPolicy": {"type": "string"},
        "stabilizationWindowSeconds": {"type": "integer", "minimum": 0, "maximum": 3600},
    }
)

SCALED_OBJECT = strict_object(
    {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": METADATA,
        "spec": strict_object(
            {
                "scaleTargetRef": strict_object(
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
                "advanced": strict_object(
                    {
                        "horizontalPodAutoscalerConfig": strict_object(
                            {
                                "name": {"type": "string"},
                                "behavior": strict_object(
                                    {
                                        "scaleUp": HPA_RULES,
                                        "scaleDown": HPA_RULES,
                                    }
                                ),
                            }
                        ),
                        "restoreToOriginalReplicaCount": {"type": "boolean"},
                        "scalingModifiers": {"type": "object"},
                    }
                ),
                "triggers": non_empty_array(
                    strict_object(
                        {
                            "type": {"type": "string"},
                            "name": {"type": "string"},
                            "metadata": STRING_MAP,
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "useCachedMetrics": {"type": "boolean"},
                            "authenticationRef": strict_object(
                                {"name": {"type": "string"}, "kind": {"type": "string"}}, ("name",)
                            ),
                        },
                        ("type", "metadata"),
                    )
                ),
            },
            ("scaleTargetRef", "triggers"),
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)

TRIGGER_AUTHENTICATION = strict_object(
    {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "TriggerAuthentication"},
        "metadata": METADATA,
        "spec": strict_object(
            {
                "podIdentity": strict_object(
                    {
                        "provider": {"enum": ["none", "azure-workload", "aws", "aws-eks", "gcp"]},
                        "identityId": {"type": "string"},
                        "identityAuthorityHost": {"type": "string"},
                        "identityTenantId": {"type": "string"},
                        "roleArn": {"type": "string"},
                        "identityOwner": {"enum": ["keda", "workload"]},
                    },
                    ("provider",),
                ),
                "secretTargetRef": {"type": "array"},
                "env": {"type": "array"},
                "configMapTargetRef": {"type": "array"},
                "awsSecretManager": {"type": "object"},
                "azureKeyVault": {"type": "object"},
                "gcpSecretManager": {"type": "object"},
                "hashiCorpVault": {"type": "object"},
            }
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)

POD_MONITORING = strict_object(
    {
        "apiVersion": {"const": "monitoring.googleapis.com/v1"},
        "kind": {"const": "PodMonitoring"},
        "metadata": METADATA,
        "spec": strict_object(
            {
                "selector": strict_object(
                    {"matchLabels": STRING_MAP, "matchExpressions": {"type": "array"}}
                ),
                "endpoints": non_empty_array(
                    strict_object(
                        {
                            "port": {"type": ["string", "integer"]},
                            "interval": INTERVAL,
                            "path": {"type": "string"},
                            "scheme": {"enum": ["http", "https"]},
                            "timeout": {"type": "string"},
                            "params": {"type": "object"},
                            "metricRelabeling": {"type": "array"},
                            "authorization": {"type": "object"},
                            "basicAuth": {"type": "object"},
                            "oauth2": {"type": "object"},
                            "proxyUrl": {"type": "string"},
                            "tls": {"type": "object"},
                        },
                        ("interval", "port"),
                    )
                ),
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


@pytest.mark.parametrize("target", kubernetes_targets())
def test_custom_resources_match_their_crd_fields(target: str) -> None:
    """What each Kubernetes target renders from its committed stack (every registered one)."""
    rendered = load_target(target).render.manifests(
        read_dev(target), lambda output: "${" + output + "}"
    )
    custom = [m for m in rendered if m["kind"] in SCHEMAS]
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


def test_a_misspelt_hpa_behavior_field_is_rejected() -> None:
    """``advanced`` is checked as deep as we write it (stabilizationWindowSeconds)."""
    scaled = manifests.scaled_object(make_spec())
    behavior = scaled["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    behavior["scaleDown"]["stabilizationWindow"] = behavior["scaleDown"].pop(
        "stabilizationWindowSeconds"
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(scaled, SCALED_OBJECT)


def test_pod_monitoring_endpoints_name_their_interval() -> None:
    """The PodMonitoring CRD requires ``interval`` on every endpoint."""
    monitoring = manifests.pod_monitoring(make_spec())
    del monitoring["spec"]["endpoints"][0]["interval"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(monitoring, POD_MONITORING)
