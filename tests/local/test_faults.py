"""Faults: Triton killed mid-run gives clear 5xx answers, nothing is orphaned, the endpoint
recovers and reloads on demand."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from tests.local.local_helpers import (
    Endpoint,
    alive,
    children,
    make_release,
    start_endpoint,
    wait_for,
    write_python_model,
)

pytestmark = pytest.mark.e2e
INVOCATION_TIMEOUT = 4.0


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    repo = tmp_path_factory.mktemp("repo")
    write_python_model(repo, "sleeper")
    store = tmp_path_factory.mktemp("store")
    make_release(repo, store, copies=1)
    running = start_endpoint(
        store, tmp_path_factory.mktemp("state"), "--invocation-timeout", str(INVOCATION_TIMEOUT)
    )
    try:
        yield running
    finally:
        running.stop()


def _infer_or_none(target: SageMakerRuntimeTarget, model: object, x: float) -> object:
    try:
        return target.infer(model, {"x": np.array([x], dtype=np.float32)})  # type: ignore[arg-type]
    except Exception:
        return None


def test_triton_killed_mid_run_then_recovered(endpoint: Endpoint) -> None:
    model = endpoint.manifest.by_target_model("sleeper-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    quick = {"x": np.array([0.0], dtype=np.float32)}
    assert target.infer(model, quick)["y"].tolist() == [0.0]
    first_pid = endpoint.status()["triton_pid"]
    stubs = children(first_pid)
    assert stubs, "the Python backend stub runs as Triton's child"
    marker = Path(endpoint.state_dir, "local-local", "repository", "sleeper-0", "executing")
    marker.unlink(missing_ok=True)
    outcome: list[str] = []

    def slow_request() -> None:
        try:
            target.infer(model, {"x": np.array([30.0], dtype=np.float32)})
            outcome.append("ok")
        except Exception as exc:
            outcome.append(str(getattr(exc, "code", exc)))

    worker = threading.Thread(target=slow_request)
    worker.start()
    wait_for(marker.exists, 30, "the request to execute inside Triton")
    os.kill(first_pid, signal.SIGKILL)
    worker.join(120)  # a safety net: the answer needs no more than noticing Triton is gone
    # a clear 5xx, not a hang: a front still waiting on the dead Triton would answer its 424
    # after --invocation-timeout, or the client would time out reading
    assert outcome == ["ServiceUnavailable"]
    # the killed Triton's stub processes go too: nothing orphaned
    wait_for(lambda: not any(alive(pid) for pid in stubs), 30, "the old stubs to exit")
    result = wait_for(lambda: _infer_or_none(target, model, 0.5), 60, "the endpoint to recover")
    assert result["y"].tolist() == [1.0]  # type: ignore[index]  # reloaded on demand
    status = endpoint.status()
    assert status["triton_restarts"] == 1 and status["triton_pid"] != first_pid
    assert status["metrics"]["Invocation5XXErrors"] >= 1
    target.close()


def test_stop_leaves_no_process_behind(tmp_path: Path) -> None:
    """SIGTERM to the endpoint stops Triton and its stubs (and a SIGKILLed front takes Triton
    with it: Triton is started with a parent-death signal)."""
    repo = tmp_path / "repo"
    write_python_model(repo, "sleeper")
    make_release(repo, tmp_path / "store", copies=1)
    for stop in (signal.SIGTERM, signal.SIGKILL):
        running = start_endpoint(tmp_path / "store", tmp_path / f"state-{stop}")
        try:
            target = SageMakerRuntimeTarget(
                "local", endpoint_url=running.url, local=True, max_attempts=1
            )
            model = running.manifest.by_target_model("sleeper-0.tar.gz")
            assert target.infer(model, {"x": np.array([0.0], dtype=np.float32)})
            target.close()
            tree = children(running.proc.pid)
            assert len(tree) >= 2  # Triton and the model's stub
            running.proc.send_signal(stop)
            running.proc.wait(30)
            wait_for(lambda pids=tree: not any(map(alive, pids)), 30, f"no orphans after {stop}")
        finally:
            running.stop()


def test_unknown_route_and_ping(endpoint: Endpoint) -> None:
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(f"{endpoint.url}/ping") as response:
        assert response.status == 200
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"{endpoint.url}/v2/repository/models/x/load", data=b"{}")
    assert info.value.code == 404  # Triton's own API is never reachable through the front


def test_a_model_that_never_answers_gets_a_model_error_in_bounded_time(
    endpoint: Endpoint,
) -> None:
    """SageMaker gives a container 60 s; past ``--invocation-timeout`` the caller gets a 424."""
    from botocore.exceptions import ClientError

    model = endpoint.manifest.by_target_model("sleeper-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    request = target.prepare(model, {"x": np.array([INVOCATION_TIMEOUT + 6], dtype=np.float32)})
    started = time.monotonic()
    with pytest.raises(ClientError) as info:
        target.client.invoke_endpoint(
            EndpointName="local",
            TargetModel=model.target_model,
            Body=request.body,
            ContentType=request.content_type,
        )
    elapsed = time.monotonic() - started
    target.close()
    error = info.value.response["Error"]
    assert error["Code"] == "ModelError"
    assert "did not answer within the 4 s invocation timeout" in error["Message"]
    # not before the timeout, and before the model itself could have answered (it sleeps
    # INVOCATION_TIMEOUT + 6 s): the front gave up, whatever the machine's load
    assert INVOCATION_TIMEOUT <= elapsed < INVOCATION_TIMEOUT + 6
