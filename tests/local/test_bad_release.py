"""A bad release shows on the local endpoint (issue 40, row 4): a model that fails to import is
visible in ``endpoint status`` with Triton's reason, makes ``endpoint wait`` fail at once, and is
counted in ``metrics``. Real Triton, real HTTP, the real CLI."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clients.inputs import example_inputs
from tdk.errors import TdkError
from tests.local.local_helpers import Endpoint, make_release, start_endpoint

NAME = "badrelease"
#: what the broken model's module raises when Triton's Python backend imports it
REASON = "No module named 'tdk_missing_dependency'"


@pytest.fixture(scope="module")
def bad_endpoint(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    repo = tmp_path_factory.mktemp("repo")
    shutil.copytree(sample_repo / "tokenizer", repo / "tokenizer")
    model = repo / "tokenizer" / "1" / "model.py"
    model.write_text(model.read_text() + "\nimport tdk_missing_dependency  # noqa: E402,F401\n")
    store = tmp_path_factory.mktemp("store")
    make_release(repo, store, copies=1)
    running = start_endpoint(store, tmp_path_factory.mktemp("state"), name=NAME)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def failed_once(bad_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> Endpoint:
    """The endpoint after one request for the broken model (the load fails)."""
    monkeypatch.setenv("TDK_STATE_DIR", str(bad_endpoint.state_dir))
    model = bad_endpoint.manifest.models[0]
    from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget

    target = SageMakerRuntimeTarget(NAME, endpoint_url=bad_endpoint.url, local=True)
    try:
        with pytest.raises(TdkError, match="tdk_missing_dependency"):
            target.infer(model, example_inputs(model))
    finally:
        target.close()
    return bad_endpoint


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_status_shows_the_failed_model_with_tritons_reason(failed_once: Endpoint) -> None:
    code, output = _cli("endpoint", "status", "--endpoint", NAME, "--json")
    assert code == 0, output
    state = json.loads(output)
    assert state["status"] == "Failed" and state["ready"] is False
    [(target_model, reason)] = state["failed"].items()
    assert target_model == failed_once.manifest.models[0].target_model
    assert REASON in reason and REASON in state["failure_reason"]


def test_wait_fails_at_once_naming_the_reason(failed_once: Endpoint) -> None:
    code, output = _cli("endpoint", "wait", "--endpoint", NAME, "--timeout", "600")
    assert code != 0
    assert REASON in " ".join(output.split())


def test_metrics_count_the_load_failure(failed_once: Endpoint) -> None:
    code, output = _cli("metrics", "--endpoint", NAME, "--json")
    assert code == 0, output
    figures = {m["key"]: m["value"] for m in json.loads(output)["metrics"]}
    assert figures["model_load_failures"] >= 1
