"""The aks dashboard: an Azure Monitor workbook on the stack's workspace, declared by the real
program under mocks, charting SageMaker's six multi-model metrics (plus pending requests and
evictions) in ``mme`` mode, every query valid PromQL to ``promtool``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml

from infra.targets.aks.workbook import queries
from tests.infra.pulumi_harness import Declared, run_stack
from tests.prom.tools import promtool

STACK = "aks-dev"
WORKSPACE = "tdk-aks-dev-monitoring-workspace-id"
MME = {"k8sModelMode": "mme", "k8sFrontImage": "registry.example.com/tdk-front:1"}
#: the series of SageMaker's six multi-model metrics and KEDA's two, as the front exports them
MULTI_MODEL_SERIES = {
    "ModelCacheHit": "tdk_model_cache_hit_sum",
    "LoadedModelCount": "tdk_loaded_model_count",
    "ModelLoadingWaitTime": "tdk_model_loading_wait_time_microseconds",
    "ModelDownloadingTime": "tdk_model_downloading_time_microseconds",
    "ModelLoadingTime": "tdk_model_loading_time_microseconds",
    "ModelUnloadingTime": "tdk_model_unloading_time_microseconds",
    "Pending requests": "tdk_pending_requests",
    "Evictions": "tdk_model_evictions_total",
}


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TDK_TODAY", "2026-12-07")
    yield


@cache
def _workbook(mode: str) -> tuple[Declared, dict[str, str]]:
    run = run_stack(STACK, overrides=MME if mode == "mme" else None)
    workbook = run.one("azure-native:applicationinsights:Workbook")
    assert run.outputs["dashboardUrl"].startswith("https://portal.azure.com/#resource")
    return workbook, run.outputs


def test_the_workbook_is_a_shared_dashboard_on_the_workspace() -> None:
    workbook, outputs = _workbook("mme")
    inputs = workbook.inputs
    assert (inputs["kind"], inputs["category"]) == ("shared", "workbook")
    assert inputs["sourceId"] == WORKSPACE
    assert uuid.UUID(inputs["resourceName"])  # Microsoft.Insights/workbooks names are UUIDs
    assert inputs["resourceName"] == _workbook("all")[0].inputs["resourceName"]  # stable
    assert outputs["dashboardUrl"].endswith("-monitoring-workbook-id/workbook")
    items = json.loads(inputs["serializedData"])["items"]
    charts = [item["content"] for item in items if item["type"] == 3]
    assert charts and all(
        (c["queryType"], c["resourceType"], c["crossComponentResources"])
        == (16, "microsoft.monitor/accounts", [WORKSPACE])
        for c in charts
    )
    assert all(c["timeContextFromParameter"] == "TimeRange" for c in charts)


def test_mme_charts_the_six_multi_model_metrics_pending_and_evictions() -> None:
    charted = queries(_workbook("mme")[0].inputs["serializedData"])
    for metric, series in MULTI_MODEL_SERIES.items():
        [title] = [t for t, q in charted.items() if series in q]
        assert title.startswith(metric), (metric, title)
    assert any("nv_inference_request_success" in q for q in charted.values())


def test_all_mode_charts_triton_without_the_front_s_series() -> None:
    charted = queries(_workbook("all")[0].inputs["serializedData"])
    assert any("nv_inference_request_success" in q for q in charted.values())
    assert not any("tdk_" in q for q in charted.values())


def _check(tmp_path: Path, charted: dict[str, str]) -> tuple[int, str]:
    """``promtool check rules`` on the queries as recording rules (it parses each expr)."""
    rules = [{"record": f"dashboard:chart_{i}", "expr": q} for i, q in enumerate(charted.values())]
    path = tmp_path / "dashboard.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = promtool("check", "rules", path)
    return checked.returncode, checked.stdout + checked.stderr


@pytest.mark.parametrize("mode", ["mme", "all"])
def test_every_chart_is_valid_promql(tmp_path: Path, mode: str) -> None:
    code, output = _check(tmp_path, queries(_workbook(mode)[0].inputs["serializedData"]))
    assert code == 0, output


def test_a_broken_query_fails_the_check(tmp_path: Path) -> None:
    charted = queries(_workbook("mme")[0].inputs["serializedData"])
    first = next(iter(charted))
    code, output = _check(tmp_path, {**charted, first: charted[first] + ")"})
    assert code != 0 and "parse error" in output
