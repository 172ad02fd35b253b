"""The deployed PromQL against a real Prometheus scraping a real Triton (tests/prom/live.py).

The KEDA query and alert expressions are the ones ``tdk render k8s --stack gke-dev`` writes;
``tdk metrics``/``tdk endpoint`` read the same Prometheus and Triton through the k8s client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from infra.clients.prometheus import PrometheusClient
from infra.k8s.alerts import RULE_FILE
from infra.perf.bench.loadgen import closed_loop
from tests.prom.live import Live, prometheus, prometheus_config, triton, until

ROOT = Path(__file__).resolve().parents[2]
STACK = "gke-dev"
CLIENTS = 8  # one model instance computing 20 ms per request: 7 of 8 requests wait
REQUESTS = 300


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What gke-dev deploys: its rendered manifests and alert rule file."""
    out = tmp_path_factory.mktemp("render")
    args = ["render", "k8s", "--stack", STACK, "--out", str(out), "--json"]
    args += ["--rules-out", str(out / RULE_FILE)]
    result = CliRunner().invoke(app, [*args, "--project-dir", str(ROOT)])
    assert result.exit_code == 0, result.output
    docs = [yaml.safe_load(Path(f["path"]).read_text()) for f in json.loads(result.stdout)["files"]]
    [scaled] = [d for d in docs if d["kind"] == "ScaledObject"]
    rules = yaml.safe_load((out / RULE_FILE).read_text())["groups"][0]["rules"]
    return {
        "rules_path": out / RULE_FILE,
        "namespace": scaled["metadata"]["namespace"],
        "job": scaled["spec"]["scaleTargetRef"]["name"],
        "keda": scaled["spec"]["triggers"][0]["metadata"],
        "alerts": {rule["alert"]: rule["expr"] for rule in rules},
    }


@pytest.fixture(scope="module")
def live(deployed: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    work = tmp_path_factory.mktemp("live")
    with triton(work) as (server, stop):
        target = f"127.0.0.1:{server.metrics_port}"
        config = prometheus_config(
            target, deployed["namespace"], deployed["job"], deployed["rules_path"]
        )
        with prometheus(work, config) as url:
            client = PrometheusClient(url)
            # two scrapes of the compute counter give rate() its two samples
            scrapes = "count_over_time(nv_inference_compute_infer_duration_us[1m])"
            until(lambda: (client.value(scrapes) or 0) >= 2, 20, "two scrapes of Triton")
            yield Live(server, url, client, stop)


def _metrics_cli(live: Live, *extra: str) -> dict[str, Any]:
    args = ["metrics", "--target", "gke", "--stack", STACK, "--project-dir", str(ROOT)]
    result = CliRunner().invoke(app, [*args, "--prometheus-url", live.prometheus_url, *extra])
    assert result.exit_code == 0, result.output
    return {m["key"]: m for m in json.loads(result.stdout)["metrics"]}


def _idle_keda_reads_zero_and_no_alert_condition_holds(
    live: Live, deployed: dict[str, Any]
) -> None:
    prom = live.prometheus
    assert prom.value(deployed["keda"]["query"]) == 0
    for name, expr in deployed["alerts"].items():
        assert prom.query(expr) == [], f"{name} holds while idle: {expr}"
    figures = _metrics_cli(live, "--json")
    assert figures["requests_s"]["value"] == 0
    assert figures["queue_compute_ratio"]["value"] == 0
    assert figures["error_ratio"]["value"] == 0
    assert figures["replicas"]["value"] == 1


def _queueing_raises_keda_query_above_threshold_and_alert_conditions(
    live: Live, deployed: dict[str, Any]
) -> None:
    prom = live.prometheus
    threshold = float(deployed["keda"]["threshold"])
    # a budget of requests, not a duration: the load ends on its own in ~6 s
    load = threading.Thread(
        target=closed_loop, args=(lambda: live.infer(1.0), CLIENTS, 60.0, REQUESTS), daemon=True
    )
    load.start()
    try:
        for _ in range(30):  # ~4% of requests fail inside the model: over the 2% alert
            with pytest.raises(Exception, match="500"):
                live.infer(-1.0)
        ratio = until(
            lambda: (
                (v := prom.value(deployed["keda"]["query"])) is not None and v > threshold and v
            ),
            20,
            f"KEDA query above {threshold}",
        )
        assert ratio > threshold
        queue_alert = deployed["alerts"]["triton-queue-ratio"]
        until(lambda: prom.query(queue_alert) != [], 20, "queue-ratio alert condition")
        until(
            lambda: prom.query(deployed["alerts"]["triton-error-rate"]) != [],
            20,
            "error-rate alert condition",
        )
        figures = _metrics_cli(live, "--json", "--since", "1m")
        assert figures["requests_s"]["value"] > 0
        assert figures["queue_compute_ratio"]["value"] > threshold
        assert 0.02 < figures["error_ratio"]["value"] < 0.5
        # Triton's summary is in µs; the figure is ms: a 20 ms model reads tens to hundreds
        p99 = figures["p99_latency_ms"]["value"]
        assert 20 <= p99 < 5000
        # well under the SLO, the SLO alert stays quiet (a busy machine can push this 20 ms
        # model past the 500 ms SLO; then the alert is right to fire, and nothing is asserted)
        expr = deployed["alerts"]["triton-latency-slo"]
        if p99 < 0.8 * float(expr.rsplit(">", 1)[1]):
            assert prom.query(expr) == [], p99
    finally:
        load.join(60)
    assert not load.is_alive()


def _endpoint_status_and_wait_read_triton_readiness(live: Live) -> None:
    args = ["--target", "gke", "--stack", STACK, "--project-dir", str(ROOT)]
    url = ["--url", live.triton.http_url]
    status = CliRunner().invoke(app, ["endpoint", "status", *args, *url, "--json"])
    assert status.exit_code == 0, status.output
    state = json.loads(status.stdout)
    assert (state["status"], state["ready"], state["namespace"]) == ("Ready", True, "triton")
    waited = CliRunner().invoke(
        app, ["endpoint", "wait", *args, *url, "--timeout", "10", "--interval", "0.1"]
    )
    assert waited.exit_code == 0, waited.output
    assert "Ready" in waited.stdout


def _missing_series_alert_holds_once_triton_stops(live: Live, deployed: dict[str, Any]) -> None:
    absent = deployed["alerts"]["triton-metrics-absent"]
    assert live.prometheus.query(absent) == []
    live.stop_triton()
    # a failed scrape marks the series stale at once: absent() turns 1, labelled by workload
    [sample] = until(lambda: live.prometheus.query(absent), 20, "absent() after Triton stops")
    assert sample.value == 1
    assert sample.labels == {"namespace": deployed["namespace"], "job": deployed["job"]}
    args = ["--target", "gke", "--stack", STACK, "--project-dir", str(ROOT)]
    options = ["--url", live.triton.http_url, "--timeout", "0.5", "--interval", "0.1"]
    down = CliRunner().invoke(app, ["endpoint", "wait", *args, *options])
    assert down.exit_code == 1
    assert "still Unreachable" in down.output


def test_one_workload_idle_then_queueing_then_gone(live: Live, deployed: dict[str, Any]) -> None:
    """The steps share one Triton and one Prometheus and depend on what came before (idle
    figures need a quiet 2 m window, the absent() alert stops Triton), so they run in this
    order inside one test whatever order the suite runs in."""
    _idle_keda_reads_zero_and_no_alert_condition_holds(live, deployed)
    _queueing_raises_keda_query_above_threshold_and_alert_conditions(live, deployed)
    _endpoint_status_and_wait_read_triton_readiness(live)
    _missing_series_alert_holds_once_triton_stops(live, deployed)
