"""An ``mme`` workload's figures end to end: a real Prometheus (Debian) scrapes a front's
``/metrics`` (the front's own exposition, ``infra/targets/local/metrics.py``, labelled as the
clusters label it) with the multi-model alert rules loaded, and ``tdk metrics --stack`` of an
``mme`` stack reads SageMaker's six multi-model metrics and KEDA's two through the k8s client.
The PromQL thus meets the series names the front really exports."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.k8s.alerts import multi_model_rules, rules_yaml
from infra.targets.local.metrics import Metrics
from tests.infra.pulumi_harness import ROOT
from tests.prom.live import prometheus, prometheus_config, until
from tests.registry_lists import dev_stack, kubernetes_targets
from tests.stand_ins import QuietHandler, serving

MME = {"k8sModelMode": "mme", "k8sFrontImage": "registry.example.com/tdk-front:1"}
NAMESPACE = "triton"  # Pulumi.yaml's k8sNamespace default
MODELS = frozenset({"m-0", "m-1"})


class _Front:
    """The figures a front would hold: changed by the test while Prometheus scrapes them."""

    lock = threading.Lock()
    metrics = Metrics(known=MODELS)
    loaded = 2

    @classmethod
    def text(cls) -> bytes:
        with cls.lock:
            return cls.metrics.prometheus(lambda: cls.loaded, lambda: sorted(MODELS))


class _Handler(QuietHandler):
    def do_GET(self) -> None:
        if self.path == "/metrics":
            self.send_body(200, _Front.text(), "text/plain; version=0.0.4")
        else:
            self.send_body(404, b"", "text/plain")


def _traffic() -> None:
    """One more second of a busy front: 3 hits and 1 miss, one cold load of 2 s, one
    eviction; 5 requests held."""
    with _Front.lock:
        metrics = _Front.metrics
        for hit in (True, True, True, False):
            metrics.cache_lookup(hit, "m-0")
        metrics.observe("ModelLoadingWaitTime", 2.0, "m-1")
        metrics.observe("ModelLoadingTime", 1.5, "m-1")
        metrics.observe("ModelDownloadingTime", 0.4, "m-1")
        metrics.observe("ModelUnloadingTime", 0.1, "m-0")
        metrics.count("ModelEvictions", "m-0")
        metrics.pending = 5


def _feed(stop: threading.Event) -> None:
    while not stop.wait(1):
        _traffic()


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(Prometheus URL, the stack name) while a stand-in front's traffic goes on."""
    work = tmp_path_factory.mktemp("mme-live")
    stack = dev_stack(kubernetes_targets()[0])
    job = f"tdk-{stack}"  # the committed stack's name
    rules = work / "rules.yaml"
    rules.write_text(rules_yaml(multi_model_rules(NAMESPACE, job, 60)))
    stop = threading.Event()
    with serving(_Handler) as front:
        config = prometheus_config(front.removeprefix("http://"), NAMESPACE, job, rules)
        with prometheus(work, config) as url:  # it refuses to start on a bad rule file
            feeder = threading.Thread(target=_feed, args=(stop,))
            feeder.start()
            try:
                yield url, stack
            finally:
                stop.set()
                feeder.join()


def _project(tmp_path: Path, stack: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    keys = "".join(f"  triton-deploy-kit:{k}: {v}\n" for k, v in MME.items())
    (project / f"Pulumi.{stack}.yaml").write_text(
        (ROOT / f"Pulumi.{stack}.yaml").read_text() + keys
    )
    return project


def _figures(project: Path, stack: str, url: str) -> dict[str, Any]:
    args = ["metrics", "--stack", stack, "--project-dir", str(project), "--prometheus-url", url]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return {m["key"]: m["value"] for m in json.loads(result.stdout)["metrics"]}


def test_tdk_metrics_reads_the_six_multi_model_metrics_of_an_mme_stack(
    scraped: tuple[str, str], tmp_path: Path
) -> None:
    url, stack = scraped
    project = _project(tmp_path, stack)

    def busy() -> dict[str, Any] | None:
        """The figures once two scrapes saw the front's counters grow."""
        found = _figures(project, stack, url)
        return found if found.get("modelcachehit") and found.get("evictions_s") else None

    read = until(busy, 60, "two scrapes of a busy front", step=1.0)
    assert read["modelcachehit"] == pytest.approx(0.75)  # 3 hits in 4 lookups
    assert read["loadedmodelcount"] == 2
    assert read["modelloadingwaittime_p99_ms"] == pytest.approx(2000)
    assert read["modelloadingtime_p99_ms"] == pytest.approx(1500)
    assert read["modeldownloadingtime_p99_ms"] == pytest.approx(400)
    assert read["modelunloadingtime_p99_ms"] == pytest.approx(100)
    assert read["pending_requests"] == 5
    assert read["evictions_s"] > 0
    # the same stack in all mode reads Triton's figures only
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", plain)
    shutil.copy(ROOT / f"Pulumi.{stack}.yaml", plain)
    assert "modelcachehit" not in _figures(plain, stack, url)
