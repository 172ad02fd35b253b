"""What `tdk render k8s` writes for an onprem stack, per store and model mode: the core objects
pass `kubernetes-validate --strict`; the prometheus-operator objects pass their CRDs' schemas,
hand-written field for field from prometheus-operator's CRDs
(example/prometheus-operator-crd-full/monitoring.coreos.com_podmonitors.yaml and
_prometheusrules.yaml at 6adcebc, 2026-08-08, read 2026-12-07: PodMonitorSpec ``jobLabel``,
``selector``, ``podMetricsEndpoints[]`` ``port``/``path``/``interval``; PrometheusRuleSpec
``groups[]`` ``name``/``rules[]`` with ``alert``/``record``, ``expr``, ``for``, ``labels``,
``annotations``), unknown fields refused as a structural schema would prune them; the
interval pattern is stricter than the CRD's (the kit writes seconds only)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from infra.targets.onprem.target import TARGET
from tests.infra.crd_fields import INTERVAL, STRING_MAP, non_empty_array, strict_object
from tests.infra.test_k8s_manifests import K8S_VERSION, is_custom
from tests.registry_lists import read_dev

METADATA = strict_object(
    {"name": {"type": "string"}, "namespace": {"type": "string"}, "labels": STRING_MAP},
    ("name", "namespace"),
)
SCHEMAS = {
    "PodMonitor": strict_object(
        {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": "PodMonitor"},
            "metadata": METADATA,
            "spec": strict_object(
                {
                    "jobLabel": {"type": "string"},
                    "selector": strict_object({"matchLabels": STRING_MAP}),
                    "podMetricsEndpoints": non_empty_array(
                        strict_object(
                            {
                                "port": {"type": "string"},
                                "path": {"type": "string"},
                                "interval": INTERVAL,
                            },
                            ("port",),
                        )
                    ),
                },
                ("selector", "podMetricsEndpoints"),
            ),
        },
        ("apiVersion", "kind", "metadata", "spec"),
    ),
    "PrometheusRule": strict_object(
        {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": "PrometheusRule"},
            "metadata": METADATA,
            "spec": strict_object(
                {
                    "groups": {
                        "type": "array",
                        "items": strict_object(
                            {
                                "name": {"type": "string", "minLength": 1},
                                "rules": {
                                    "type": "array",
                                    "items": strict_object(
                                        {
                                            "alert": {"type": "string"},
                                            "record": {"type": "string"},
                                            "expr": {"type": "string", "minLength": 1},
                                            "for": {"type": "string"},
                                            "labels": STRING_MAP,
                                            "annotations": STRING_MAP,
                                        },
                                        ("expr",),
                                    ),
                                },
                            },
                            ("name", "rules"),
                        ),
                    }
                },
                ("groups",),
            ),
        },
        ("apiVersion", "kind", "metadata", "spec"),
    ),
}

STORES = {
    "s3-minio": {},
    "s3-aws": {"onpremS3EndpointUrl": ""},
    "gs": {"releaseUrl": "gs://my-tdk-releases/v1"},
    "az": {"releaseUrl": "az://mytdkreleases/my-tdk-releases/v1"},
}
MODES = {"all": {}, "mme": {"k8sModelMode": "mme", "k8sFrontImage": "registry.lab/front:1"}}


def _rendered(overrides: dict[str, Any]) -> list[dict[str, Any]]:
    config = read_dev("onprem", overrides)
    return TARGET.render.manifests(config, lambda output: "${" + output + "}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("store", STORES)
def test_every_store_and_mode_renders_valid_manifests(store: str, mode: str) -> None:
    rendered = _rendered({**STORES[store], **MODES[mode]})
    custom = [m for m in rendered if is_custom(m)]
    # the Gateway API's objects (mme) have their vendored schemas: tests/infra/test_k8s_mme.py
    core = [m for m in rendered if not is_custom(m) and not m["apiVersion"].startswith("gateway.")]
    for manifest in core:
        assert kubernetes_validate.validate(manifest, K8S_VERSION, strict=True) == K8S_VERSION
    for manifest in (m for m in custom if m["kind"] in SCHEMAS):
        jsonschema.validate(manifest, SCHEMAS[manifest["kind"]])
    assert {m["kind"] for m in custom} >= {"PodMonitor", "PrometheusRule", "ScaledObject"}


def test_the_schemas_refuse_a_misspelt_field() -> None:
    (monitor,) = [m for m in _rendered({}) if m["kind"] == "PodMonitor"]
    monitor["spec"]["podMetricEndpoints"] = monitor["spec"].pop("podMetricsEndpoints")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(monitor, SCHEMAS["PodMonitor"])


def test_the_dashboard_charts_the_multi_model_metrics_only_in_mme_mode() -> None:
    def dashboard(overrides: dict[str, Any]) -> str:
        (board,) = [m for m in _rendered(overrides) if m["kind"] == "ConfigMap"]
        (body,) = board["data"].values()
        assert json.loads(body)["panels"]
        return str(body)

    assert "tdk_loaded_model_count" in dashboard(MODES["mme"])
    assert "tdk_loaded_model_count" not in dashboard({})
