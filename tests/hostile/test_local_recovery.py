"""The local endpoint names and recovers models exactly (issue 36 item 6): an inference component
name answers for the copy of that name, never for another whose derived name collides; a model
whose Python stub crashed is unloaded and loaded again on its next request, as SageMaker MME
reloads, and the error says so."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from cli.main import app
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import Endpoint, children, python_endpoint

pytestmark = pytest.mark.e2e
runner = CliRunner()
_BODY = json.dumps({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [0.0]}]})


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """Copies ``a-b-0`` and ``a_b-0``: both become inference component ``a-b-0`` on
    sagemaker-ic, so the local endpoint must answer each by its exact name."""
    _runtime_or_skip()
    with python_endpoint(tmp_path_factory.mktemp("endpoint"), "a-b", "a_b") as running:
        yield running


def _by_component(endpoint: Endpoint, name: str) -> Any:
    return endpoint.client().invoke_endpoint(
        EndpointName="local",
        InferenceComponentName=name,
        Body=_BODY,
        ContentType="application/json",
    )


def _loaded_after(endpoint: Endpoint, call: Any) -> set[str]:
    before = set(endpoint.status()["loaded"])
    call()
    return set(endpoint.status()["loaded"]) - before


def test_a_component_name_answers_for_the_copy_of_exactly_that_name(endpoint: Endpoint) -> None:
    assert _loaded_after(endpoint, lambda: _by_component(endpoint, "a-b-0")) == {"a-b-0.tar.gz"}
    assert _loaded_after(endpoint, lambda: _by_component(endpoint, "a_b-0")) == {"a_b-0.tar.gz"}


def test_the_response_stream_route_matches_component_names_exactly(endpoint: Endpoint) -> None:
    """The same lookup serves InvokeEndpointWithResponseStream (these copies are not
    decoupled, so Triton refuses the stream; what matters is which copy was asked)."""
    client = endpoint.client()
    with pytest.raises(ClientError) as refused:
        client.invoke_endpoint_with_response_stream(
            EndpointName="local",
            InferenceComponentName="a-b-0",
            Body=_BODY,
            ContentType="application/json",
        )
    message = refused.value.response["Error"]["Message"]
    assert "a-b-0.tar.gz" in message and "a_b-0" not in message, message


def _stub_of(endpoint: Endpoint, copy: str) -> int:
    """The pid of the copy's Python stub (the model writes it when it executes)."""
    root = endpoint.state_dir / "local-local" / "repository" / copy / "executing"
    return int(Path(root).read_text())


def test_a_crashed_stub_is_reloaded_on_the_next_request(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(endpoint.state_dir))
    invoke = ["invoke", "--target-model", "a-b-0.tar.gz", "-i", "x=[0.0]", "--json"]
    first = runner.invoke(app, invoke)
    assert first.exit_code == 0, first.output
    os.kill(_stub_of(endpoint, "a-b-0"), signal.SIGKILL)
    failed = runner.invoke(app, invoke)
    assert failed.exit_code != 0, failed.output
    assert "not healthy" in failed.output and "loads it again on the next request" in failed.output
    assert "retry: the endpoint reloads the model on the next request" in failed.output
    assert "--target-model" not in failed.output
    assert "a-b-0.tar.gz" not in endpoint.status()["loaded"]
    again = runner.invoke(app, invoke)
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["outputs"]["y"]["data"] == [0.0]
    assert "a-b-0.tar.gz" in endpoint.status()["loaded"]


def _stub_serving(endpoint: Endpoint, model: str) -> int:
    """The pid of the Python stub that serves ``model`` (its command line names the model)."""
    for pid in children(endpoint.status()["triton_pid"]):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"triton_python_backend_stub" in command and f"/{model}/".encode() in command:
            return pid
    raise AssertionError(f"no stub serves {model}")


def test_a_crashed_stub_of_a_decoupled_model_is_reloaded_too(
    llm_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(llm_endpoint.state_dir))
    invoke = ["invoke", "--target-model", "llm-0.tar.gz", "--prompt", "hi", "--max-tokens", "2"]
    first = runner.invoke(app, invoke)
    assert first.exit_code == 0, first.output
    os.kill(_stub_serving(llm_endpoint, "llm-0"), signal.SIGKILL)
    failed = runner.invoke(app, invoke)
    assert failed.exit_code != 0 and "not healthy" in failed.output, failed.output
    assert "llm-0.tar.gz" not in llm_endpoint.status()["loaded"]
    again = runner.invoke(app, invoke)
    assert again.exit_code == 0, again.output
