"""``tdk render k8s --models`` and ``pulumi up`` (mocks): KEDA scales each engine on series its
Triton backend exports (vLLM only with its metrics on, the TensorRT-LLM C++ backend's
``nv_trt_llm_*``; the LLM-API model and a vLLM model with metrics off on Triton's own in-flight
and pending series), and the LLM alert rules docs/streaming.md promises are written and
deployed, with the generic p99 latency rule leaving the streamed models out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.infra.pulumi_harness import run_stack
from tests.infra.test_llm_render import _deployment, _project, _render
from tests.validate.llm import corpus as c

METRICS_OFF = (
    c.VLLM_CONFIG
    + 'parameters: { key: "REPORT_CUSTOM_METRICS" value: { string_value: "maybe" } }\n'
)
CASES: dict[str, tuple[Any, list[str]]] = {
    "vllm": (lambda root: c.vllm_repo(root), ["vllm-in-flight", "vllm-ttft"]),
    "vllm-metrics-off": (
        lambda root: c.vllm_repo(root, config=METRICS_OFF),
        ["triton-in-flight", "triton-pending"],
    ),
    "vllm-disable-log-stats": (
        lambda root: c.vllm_repo(root, args=dict(c.VLLM_ARGS, disable_log_stats=True)),
        ["triton-in-flight", "triton-pending"],
    ),
    "llm-api": (lambda root: c.llm_api_repo(root), ["triton-in-flight", "triton-pending"]),
    "trtllm-engine": (lambda root: c.trtllm_repo(root), ["trtllm-waiting", "trtllm-kv-cache"]),
}


def _rendered(tmp_path: Path, case: str) -> tuple[list[dict[str, Any]], dict[str, Any], Path]:
    make, _ = CASES[case]
    repo = make(tmp_path / "repo")
    project = _project(tmp_path, "gke-dev")
    manifests = _render(project, "gke-dev", repo, tmp_path / "out")
    rules = yaml.safe_load((tmp_path / "out.alerts.rules.yaml").read_text())
    return manifests, rules, repo


@pytest.mark.parametrize("case", sorted(CASES))
def test_keda_scales_on_series_the_backend_exports(tmp_path: Path, case: str) -> None:
    manifests, _, repo = _rendered(tmp_path, case)
    [scaled] = [m for m in manifests if m["kind"] == "ScaledObject"]
    assert [t["name"] for t in scaled["spec"]["triggers"]] == CASES[case][1]
    run = run_stack("gke-dev", {"k8sModels": str(repo)})
    declared = run.one("kubernetes:keda.sh/v1alpha1:ScaledObject").inputs["spec"]["triggers"]
    assert [t["name"] for t in declared] == CASES[case][1]  # the program agrees


def _alerts(rules: dict[str, Any]) -> dict[str, str]:
    return {r["alert"]: r["expr"] for r in rules["groups"][0]["rules"]}


@pytest.mark.parametrize(
    ("case", "llm_rules"),
    [
        ("vllm", {"triton-ttft-slo", "vllm-e2e-slo"}),
        ("vllm-metrics-off", {"triton-ttft-slo"}),
        ("llm-api", set()),  # model.yaml's triton_config decoupled: False: nothing streams
    ],
)
def test_llm_alert_rules_are_written_and_deployed(
    tmp_path: Path, case: str, llm_rules: set[str]
) -> None:
    manifests, rules, repo = _rendered(tmp_path, case)
    alerts = _alerts(rules)
    assert {"triton-ttft-slo", "vllm-e2e-slo"} & set(alerts) == llm_rules
    streamed = bool(llm_rules)
    assert ('model!~"vllm_model"' in alerts["triton-latency-slo"]) is streamed
    run = run_stack("gke-dev", {"k8sModels": str(repo)})
    deployed = {
        d.inputs["displayName"]: d.inputs["conditions"][0]["conditionPrometheusQueryLanguage"][
            "query"
        ]
        for d in run.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    }
    assert deployed == alerts  # the rules render writes are the rules the stack deploys
    assert _deployment(manifests)
