"""Faults: Triton killed mid-run gives clear 5xx answers, then the endpoint recovers."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from botocore.exceptions import ClientError

from infra.clients.inputs import example_inputs
from infra.clients.sagemaker_runtime import SageMakerRuntimeTarget
from tests.local.local_helpers import Endpoint

pytestmark = pytest.mark.e2e


def test_triton_killed_mid_run_then_recovered(endpoint: Endpoint) -> None:
    model = endpoint.manifest.by_target_model("text_classifier-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    request = target.prepare(model, example_inputs(model))
    client = endpoint.client()
    target.send(model, request)  # loaded
    first_pid = endpoint.status()["triton_pid"]
    outcomes: list[str] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            try:
                client.invoke_endpoint(
                    EndpointName="local",
                    TargetModel=model.target_model,
                    Body=request.body,
                    ContentType=request.content_type,
                )
                outcomes.append("ok")
            except ClientError as exc:
                status = exc.response["ResponseMetadata"]["HTTPStatusCode"]
                outcomes.append(f"{status} {exc.response['Error']['Code']}")

    workers = [threading.Thread(target=hammer) for _ in range(4)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    os.kill(first_pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = endpoint.status()
        if status["triton_restarts"] == 1 and outcomes[-8:] == ["ok"] * 8:
            break
        time.sleep(0.2)
    stop.set()
    for worker in workers:
        worker.join(30)
    errors = {outcome for outcome in outcomes if outcome != "ok"}
    assert errors, "killing Triton mid-run should fail some in-flight requests"
    assert all(error.startswith("5") for error in errors), errors
    status = endpoint.status()
    assert status["triton_restarts"] == 1 and status["triton_pid"] != first_pid
    assert model.target_model in status["loaded"]  # reloaded on demand
    assert outcomes[-1] == "ok"
    target.close()
