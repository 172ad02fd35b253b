"""LLM workloads: KEDA scales on the engines' own metrics (chosen by the models' backends), the
ScaledObject passes the vendored KEDA CRD schema, and Triton exports the TTFT histogram."""

from __future__ import annotations

import jsonschema
import pytest

from infra.k8s import manifests
from infra.targets.eks.builders import amp_source
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
    spec = make_spec(engines=engines_of(backends), metric_engines=engines_of(backends))
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
    amp = amp_source("https://aps.example/workspaces/ws-1", "us-east-1")
    spec = make_spec(engines=("vllm",), metric_engines=("vllm",), prometheus=amp)
    scaled = manifests.scaled_object(spec)
    jsonschema.validate(scaled, _schema(SCALED_OBJECT))
    assert {t["metadata"]["awsRegion"] for t in scaled["spec"]["triggers"]} == {"us-east-1"}


def test_other_models_keep_the_queue_ratio() -> None:
    spec = make_spec(engines=engines_of(["onnxruntime", "python"]))
    (trigger,) = manifests.scaled_object(spec)["spec"]["triggers"]
    assert trigger["name"] == "queue-compute-ratio" and trigger["metricType"] == "Value"
    assert trigger["metadata"]["threshold"] == "0.5"
    assert "--metrics-config=histogram_latencies=true" not in manifests.triton_args(spec)


@pytest.mark.parametrize("engine", ["vllm", "tensorrtllm"])
def test_an_engine_without_exported_metrics_scales_on_tritons_own_series(engine: str) -> None:
    """The LLM-API model registers no Prometheus metrics; a vLLM model with its metrics off
    exports no vllm: series: ``or vector(0)`` would read 0 and never scale out."""
    spec = make_spec(engines=(engine,), metric_engines=())
    scaled = manifests.scaled_object(spec)
    jsonschema.validate(scaled, _schema(SCALED_OBJECT))
    triggers = scaled["spec"]["triggers"]
    assert [t["name"] for t in triggers] == ["triton-in-flight", "triton-pending"]
    queries = " ".join(t["metadata"]["query"] for t in triggers)
    assert "nv_inference_request_duration_us" in queries
    assert "nv_inference_pending_request_count" in queries
    assert "vllm:" not in queries and "nv_trt_llm" not in queries
