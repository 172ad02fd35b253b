"""A bad release shows on gke/eks (issue 40, row 4): Triton's repository index names the model
that failed to load and why; ``endpoint status`` shows it, ``endpoint wait`` fails at once,
``metrics`` counts it. A stand-in Triton on 127.0.0.1 answers with the documented shapes of
``/v2/health/ready`` and ``POST /v2/repository/index`` (Triton's model repository extension,
https://github.com/triton-inference-server/server/blob/main/docs/protocol/extension_model_repository.md,
checked 2026-11-27); the real CLI reads it over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.registry_lists import dev_stack, kubernetes_targets
from tests.stand_ins import triton_stand_in

REASON = "load failed for model 'bert-1': version 1 is at UNAVAILABLE state: Internal: oops"
INDEX = [
    {"name": "bert-0", "version": "1", "state": "READY"},
    {"name": "bert-1", "version": "1", "state": "UNAVAILABLE", "reason": REASON},
]


@pytest.fixture(scope="module")
def triton() -> Iterator[str]:
    with triton_stand_in(ready=False, index=INDEX) as url:
        yield url


@pytest.mark.parametrize("stack", [dev_stack(t) for t in kubernetes_targets()])
def test_status_wait_and_metrics_show_the_model_that_failed(triton: str, stack: str) -> None:
    where = ["--stack", stack, "--url", triton]
    status = CliRunner().invoke(app, ["endpoint", "status", *where, "--json"])
    assert status.exit_code == 0, status.output
    state = json.loads(status.stdout)
    assert state["status"] == "Failed" and not state["ready"]
    assert state["failed"] == {"bert-1 v1": REASON}
    wait = CliRunner().invoke(app, ["endpoint", "wait", *where, "--timeout", "600"])
    assert wait.exit_code != 0
    assert REASON in " ".join(wait.output.split())
    metrics = CliRunner().invoke(app, ["metrics", *where, "--prometheus-url", triton, "--json"])
    assert metrics.exit_code == 0, metrics.output
    figures = {m["key"]: m["value"] for m in json.loads(metrics.stdout)["metrics"]}
    assert figures["model_load_failures"] == 1
