"""Faults: Triton killed mid-run gives clear 5xx answers, then the endpoint recovers."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from infra.targets.sagemaker.runtime import SageMakerRuntimeTarget
from tests.local.local_helpers import Endpoint, make_release, start_endpoint, write_python_model

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    repo = tmp_path_factory.mktemp("repo")
    write_python_model(repo, "sleeper")
    store = tmp_path_factory.mktemp("store")
    make_release(repo, store, copies=1)
    running = start_endpoint(store, tmp_path_factory.mktemp("state"))
    try:
        yield running
    finally:
        running.stop()


def test_triton_killed_mid_run_then_recovered(endpoint: Endpoint) -> None:
    model = endpoint.manifest.by_target_model("sleeper-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    quick = {"x": np.array([0.0], dtype=np.float32)}
    assert target.infer(model, quick)["y"].tolist() == [0.0]
    first_pid = endpoint.status()["triton_pid"]
    outcome: list[str] = []

    def slow_request() -> None:
        try:
            target.infer(model, {"x": np.array([3.0], dtype=np.float32)})
            outcome.append("ok")
        except Exception as exc:
            outcome.append(str(getattr(exc, "code", exc)))

    worker = threading.Thread(target=slow_request)
    worker.start()
    time.sleep(1.0)  # the request is inside Triton now
    started = time.monotonic()
    os.kill(first_pid, signal.SIGKILL)
    worker.join(30)
    assert outcome == ["ServiceUnavailable"]  # a clear 5xx, not a hang
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            result = target.infer(model, {"x": np.array([0.5], dtype=np.float32)})
            break
        except Exception:
            time.sleep(0.2)
    assert result["y"].tolist() == [1.0]  # reloaded on demand after the restart
    status = endpoint.status()
    assert status["triton_restarts"] == 1 and status["triton_pid"] != first_pid
    assert status["metrics"]["Invocation5XXErrors"] >= 1
    target.close()


def test_unknown_route_and_ping(endpoint: Endpoint) -> None:
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(f"{endpoint.url}/ping") as response:
        assert response.status == 200
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"{endpoint.url}/v2/repository/models/x/load", data=b"{}")
    assert info.value.code == 404  # Triton's own API is never reachable through the front
