"""LLM workloads: KEDA scales on the engines' own metrics (chosen by the models' backends), the
ScaledObject passes the vendored KEDA CRD schema, and Triton exports the TTFT histogram."""

from __future__ import annotations

import jsonschema
import pytest

from infra.k8s import manifests
from infra.k8s.spec import PrometheusSource
from packager.engines import engines_of
from tests.infra.test_crd_schemas import _schema
from tests.infra.test_k8s_manifests import make_spec

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"


@pytest.mark.parametrize(
    ("backends", "names", "metric"),
    [
        (["vllm", "python"], ["vllm-in-flight", "vllm-ttft"], "vllm:e2e_request_latency_seconds"),
        (["tensorrtllm", "python"], ["trtllm-waiting", "trtllm-kv-cache"], "nv_trt_llm_"),
    ],
)
def test_llm_scaled_object_uses_engine_metrics(
    backends: list[str], names: list[str], metric: str
) -> None:
    spec = make_spec(engines=engines_of(backends))
    scaled = manifests.scaled_object(spec)
    jsonschema.validate(scaled, _schema(SCALED_OBJECT))
    triggers = scaled["spec"]["triggers"]
    assert [t["name"] for t in triggers] == names
    assert metric in triggers[0]["metadata"]["query"]
    assert "nv_inference_queue_duration_us" not in str(triggers)
    assert [t["metricType"] for t in triggers] == ["AverageValue", "Value"]
    assert all(t["metadata"]["serverAddress"] == spec.prometheus.server_address for t in triggers)
    assert "--metrics-config=histogram_latencies=true" in manifests.triton_args(spec)


def test_aws_triggers_carry_the_region_and_pass_the_schema() -> None:
    amp = PrometheusSource("https://aps.example/workspaces/ws-1", "aws", "us-east-1")
    spec = make_spec(engines=("vllm",), prometheus=amp)
    scaled = manifests.scaled_object(spec)
    jsonschema.validate(scaled, _schema(SCALED_OBJECT))
    assert {t["metadata"]["awsRegion"] for t in scaled["spec"]["triggers"]} == {"us-east-1"}


def test_other_models_keep_the_queue_ratio() -> None:
    spec = make_spec(engines=engines_of(["onnxruntime", "python"]))
    (trigger,) = manifests.scaled_object(spec)["spec"]["triggers"]
    assert trigger["name"] == "queue-compute-ratio" and trigger["metricType"] == "Value"
    assert trigger["metadata"]["threshold"] == "0.5"
    assert "--metrics-config=histogram_latencies=true" not in manifests.triton_args(spec)
