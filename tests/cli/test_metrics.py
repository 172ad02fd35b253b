"""``tdk metrics``: sagemaker against moto's CloudWatch, local against a real local endpoint
(gke/eks against a real Prometheus: tests/prom/test_live.py), through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from cli.main import app
from cli.metrics import parse_since
from infra.triton_runtime.runtime import RuntimeMissing, find_runtime
from tests.cli.sagemaker_moto import REGION, moto_aws
from tests.local.local_helpers import Endpoint, make_release, start_endpoint

ENDPOINT = "tdk-metrics-ep"


@pytest.fixture(scope="module")
def cloudwatch() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch, moto_aws(patch):
        yield


def _put(
    namespace: str, name: str, values: list[float], minutes_ago: list[int], endpoint: str = ENDPOINT
) -> None:
    now = datetime.now(UTC)
    dims: list[Any] = [
        {"Name": "EndpointName", "Value": endpoint},
        {"Name": "VariantName", "Value": "AllTraffic"},
    ]
    boto3.client("cloudwatch", region_name=REGION).put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": dims,
                "Value": v,
                "Timestamp": now - timedelta(minutes=m),
            }
            for v, m in zip(values, minutes_ago, strict=True)
        ],
    )


def test_metrics_json_aggregates_the_window(cloudwatch: None) -> None:
    # moto answers percentile stats (p50/p99) with a server error once data exists for that
    # metric, so ModelLatency is left empty here; every other figure is published.
    _put("AWS/SageMaker", "Invocations", [5, 7], [20, 2])
    _put("AWS/SageMaker", "Invocation5XXErrors", [1], [2])
    _put("AWS/SageMaker", "ModelCacheHit", [1, 0, 1, 1], [9, 8, 7, 3])
    _put("AWS/SageMaker", "ModelLoadingWaitTime", [3000, 5000], [9, 8])
    _put("/aws/sagemaker/Endpoints", "LoadedModelCount", [2, 4, 3], [9, 5, 1])
    _put("/aws/sagemaker/Endpoints", "GPUUtilization", [40, 60], [4, 2])
    _put("AWS/SageMaker", "Invocations", [1000], [180])  # outside the 1h window

    result = CliRunner().invoke(
        app, ["metrics", "--target", "sagemaker", "--endpoint", ENDPOINT, "--since", "1h", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    figures = {m["key"]: m for m in report["metrics"]}
    assert report["endpoint"] == ENDPOINT and report["region"] == REGION
    assert figures["invocations"]["value"] == 12
    assert figures["errors_5xx"]["value"] == 1
    assert figures["cache_hit_rate"]["value"] == pytest.approx(75.0)
    assert figures["model_loading_wait"]["value"] == pytest.approx(4.0)  # µs -> ms
    assert figures["loaded_models"]["value"] == 4
    assert figures["gpu_utilization"]["value"] == pytest.approx(50.0)
    assert figures["model_latency_p99"]["value"] is None
    assert figures["model_latency_p99"]["datapoints"] == 0
    # a bad release shows on every target (issue 40, row 4): MME publishes no count, and the
    # figure says where a failed load goes instead of reading as zero
    failures = figures["model_load_failures"]
    assert failures["value"] is None
    assert "4xx errors" in failures["source"]
    assert f"/aws/sagemaker/Endpoints/{ENDPOINT}" in failures["source"]


def test_metrics_table_for_people(cloudwatch: None) -> None:
    _put("AWS/SageMaker", "Invocations", [3], [1], endpoint="tdk-table-ep")
    result = CliRunner().invoke(
        app, ["metrics", "--target", "sagemaker", "--endpoint", "tdk-table-ep", "--since", "30m"]
    )
    assert result.exit_code == 0, result.output
    assert "Invocations" in result.stdout and "Model cache hit rate" in result.stdout


def test_metrics_without_credentials_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    result = CliRunner().invoke(app, ["metrics", "--target", "sagemaker", "--endpoint", "x"])
    assert result.exit_code == 1
    assert "no AWS credentials" in result.output


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("30m", 1800), ("1h", 3600), ("2d", 172800)]
)
def test_parse_since(text: str, seconds: int) -> None:
    assert parse_since(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["1w", "h", "-1h", "0m", "16d"])
def test_parse_since_refuses(text: str) -> None:
    result = CliRunner().invoke(
        app, ["metrics", "--target", "sagemaker", "--endpoint", "x", "--since", text]
    )
    assert result.exit_code == 2
    assert "--since" in result.output


@pytest.fixture(scope="module")
def local_endpoint(
    sample_repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Endpoint]:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.fail(f"{exc}: run `make setup`", pytrace=False)
    store = tmp_path_factory.mktemp("store")
    make_release(sample_repo, store, copies=1, only=("text_classifier",))
    running = start_endpoint(store, tmp_path_factory.mktemp("state"), name="metrics")
    try:
        yield running
    finally:
        running.stop()


def test_local_metrics_are_sagemakers_figures_with_the_cache_hit_rate(
    local_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.clients.inputs import example_inputs
    from infra.targets.deployment import locator

    monkeypatch.setenv("TDK_STATE_DIR", str(local_endpoint.state_dir))
    client = locator("local", {"endpoint": "metrics"}).client()
    model = local_endpoint.manifest.by_target_model("text_classifier-0.tar.gz")
    target = client.invoke()  # the contract's invoke: SageMaker runtime API of the front
    try:
        for _ in range(4):  # one load (miss), three hits
            target.infer(model, example_inputs(model))
    finally:
        target.close()
    args = ["metrics", "--target", "local", "--endpoint", "metrics", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    figures = {m["key"]: m for m in report["metrics"]}
    assert report["url"] == local_endpoint.url
    assert figures["invocations"]["value"] == 4
    assert figures["cache_hit_rate"]["value"] == pytest.approx(75.0)  # a %, as SageMaker has it
    assert figures["loaded_models"]["value"] == 1
    assert figures["model_latency_p99"]["unit"] == "ms"
    assert 0 < figures["model_latency_p50"]["value"] <= figures["model_latency_p99"]["value"]
    assert figures["errors_5xx"]["value"] == 0
    table = CliRunner().invoke(app, ["metrics", "--target", "local", "--endpoint", "metrics"])
    assert table.exit_code == 0 and "Model cache hit rate" in table.stdout
    windowed = CliRunner().invoke(app, [*args, "--since", "1h"])
    assert windowed.exit_code == 2 and "since it started" in windowed.output


def test_local_metrics_without_a_running_endpoint_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["metrics", "--target", "local"])
    assert result.exit_code == 2
    assert "no local endpoint named 'local'" in result.output and "tdk local up" in result.output
