"""`tdk local down` says what it waits for when the stop takes over a second (issue 40, row 8):
the requests in flight, which it lets finish, and Triton with its models loaded; and it still
leaves no process behind. The wait is made long deterministically: the model's execute blocks
until the test creates a gate file, and the test creates it only after it has read the message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.targets.local.endpoint_state import session_processes
from packager.publish import publish
from packager.stores import open_store
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import ROOT, alive, reaped, start_endpoint, wait_for

CONFIG = """name: "gated"
backend: "python"
max_batch_size: 0
input { name: "x" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "y" data_type: TYPE_FP32 dims: [ 1 ] }
instance_group { kind: KIND_CPU count: 1 }
"""
#: execute marks that it runs, then blocks until the gate exists (the model polls the file: the
#: test itself never sleeps to synchronise). Both files are beside the model's own file, in the
#: endpoint's work dir: the only place a Triton in its mount namespace may write
MODEL = """import os
import time
import numpy as np
import triton_python_backend_utils as pb_utils

GATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")


class TritonPythonModel:
    def execute(self, requests):
        open(GATE + ".executing", "w").close()
        while not os.path.exists(GATE):
            time.sleep(0.01)
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                "y", pb_utils.get_input_tensor_by_name(r, "x").as_numpy() * 2)])
            for r in requests
        ]
"""


def test_down_says_it_waits_for_a_request_in_flight_and_leaves_nothing(tmp_path: Path) -> None:
    _runtime_or_skip()
    repo = tmp_path / "repo" / "gated"
    (repo / "1").mkdir(parents=True)
    (repo / "config.pbtxt").write_text(CONFIG)
    (repo / "1" / "model.py").write_text(MODEL)
    store = tmp_path / "store"
    publish([repo.parent], open_store(f"file://{store}"), copies=1)
    state_dir = tmp_path / "state"
    # its own session, as `tdk local up --detach` starts it: every process of it is counted
    running = start_endpoint(store, state_dir, name="gated", wrapper=("setsid",))
    answers: list[Any] = []
    gate: Path | None = None
    try:
        model = running.manifest.models[0]
        target = SageMakerRuntimeTarget("gated", endpoint_url=running.url, local=True)
        request = threading.Thread(
            target=lambda: answers.append(target.infer(model, example_inputs(model)))
        )
        request.start()
        executing = wait_for(
            lambda: next(state_dir.glob("*/repository/gated-0/1/gate.executing"), None),
            60,
            "the request to execute",
        )
        gate = executing.with_name("gate")
        session = session_processes(running.proc.pid)
        assert len(session) >= 3, session  # the front, Triton and the model's stub
        env = dict(os.environ, TDK_STATE_DIR=str(state_dir), PYTHONPATH=str(ROOT))
        down = subprocess.Popen(
            [sys.executable, "-m", "cli", "local", "down", "--endpoint", "gated", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
        )  # fmt: skip
        with reaped(down):
            assert down.stderr is not None
            said = down.stderr.readline()  # blocks until down says what it waits for
            gate.touch()  # only now may the request finish
            out, rest = down.communicate(timeout=60)
        request.join(60)
        target.close()
    finally:
        if gate is not None:
            gate.touch()
        running.stop()
    assert said == (
        "waiting for 1 request in flight to finish, then for Triton to stop "
        "(1 model loaded; killed after 30 s)…\n"
    )
    assert down.returncode == 0, rest
    assert "waiting" not in rest  # said once
    assert json.loads(out)["stopped"] == running.proc.pid
    assert len(answers) == 1 and answers[0]  # the request in flight was answered, not cut off
    assert [pid for pid in session if alive(pid)] == []
    assert not (state_dir / "local-gated.stopping.json").exists()
