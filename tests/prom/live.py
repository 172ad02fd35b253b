"""A real Triton serving the slow model and a real Prometheus scraping it, both on 127.0.0.1.

Prometheus adds the labels the clusters add (``namespace``, ``job`` = workload name, ``pod``),
so the queries the gke-dev stack deploys run unchanged against what it scraped.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from infra.clients.prometheus import PrometheusClient
from infra.triton_runtime.runtime import TritonProcess, find_runtime, free_port
from tests.local.local_helpers import terminate
from tests.prom.tools import binary

MODELS = Path(__file__).parent / "models"
T = TypeVar("T")


def until(check: Callable[[], T | None], timeout: float, what: str, step: float = 0.1) -> T:
    """Poll ``check`` until it returns something truthy (returned) or fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(step)  # poll interval, not synchronisation: the condition decides


class ScrapedTriton(TritonProcess):
    """The kit's Triton child, remembering its metrics port and with summary latencies on
    (as the Kubernetes Deployment runs it)."""

    metrics_port = 0

    def command(self, http: int, grpc: int, metrics: int) -> list[str]:
        self.metrics_port = metrics
        return [*super().command(http, grpc, metrics), "--metrics-config=summary_latencies=true"]


def _post(url: str, body: dict[str, Any], timeout: float = 30) -> bytes:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return bytes(response.read())


@dataclass
class Live:
    triton: ScrapedTriton
    prometheus_url: str
    prometheus: PrometheusClient
    stop_triton: Callable[[], None]

    def infer(self, value: float) -> None:
        """One request to the slow model (a negative value fails inside the model)."""
        body = {"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [value]}]}
        _post(f"{self.triton.http_url}/v2/models/slow/infer", body)


@contextmanager
def triton(workdir: Path) -> Iterator[tuple[ScrapedTriton, Callable[[], None]]]:
    """Triton with the slow model loaded; yields it and an idempotent stop."""
    repository = workdir / "models"
    shutil.copytree(MODELS, repository)
    process = ScrapedTriton(find_runtime(), repository, workdir / "triton", restricted=False)
    # a private loop, never installed as the thread's current one: other tests (Pulumi's mocks)
    # rely on the main thread's loop, which asyncio.Runner would reset to None on close
    loop = asyncio.new_event_loop()

    def stop() -> None:
        loop.run_until_complete(process.stop())

    try:
        loop.run_until_complete(process.start())
        _post(f"{process.http_url}/v2/repository/models/slow/load", {}, timeout=60)
        yield process, stop
    finally:
        stop()
        loop.close()


def prometheus_config(triton_metrics: str, namespace: str, job: str, rules: Path) -> str:
    """Scrape Triton every second, labelled as the clusters label it; load the alert rules."""
    relabel = [
        {"target_label": "namespace", "replacement": namespace},
        {"target_label": "job", "replacement": job},
        {"target_label": "pod", "replacement": f"{job}-0"},
    ]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {
                "job_name": "triton",
                "static_configs": [{"targets": [triton_metrics]}],
                "relabel_configs": relabel,
            }
        ],
    }
    return yaml.safe_dump(config, sort_keys=False)


@contextmanager
def prometheus(workdir: Path, config: str) -> Iterator[str]:
    """A Prometheus server on a free 127.0.0.1 port with a temporary TSDB; yields its URL."""
    (workdir / "prometheus.yml").write_text(config)
    port = free_port()
    log = (workdir / "prometheus.log").open("wb")
    command = [
        binary("prometheus"),
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        until(lambda: process.poll() is not None or _ready(url), 30, "Prometheus ready")
        if process.poll() is not None:
            raise AssertionError(f"Prometheus exited: {(workdir / 'prometheus.log').read_text()}")
        yield url
    finally:
        terminate(process, 10)
        log.close()


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False
