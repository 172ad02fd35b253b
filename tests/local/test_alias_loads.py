"""A model asked for while the real Triton still unloads it is served without waiting for that
unload: it loads under its alias (``infra.targets.local.alias``), and its answers name the
model, never the alias (issue 46's cold tail: such a request had waited for a Python stub's
finalize, about a second, before its own load began).

The unload is made long deterministically: the model's ``finalize`` marks that it runs, then
waits for a gate file the test creates only once the model has answered again. Without the alias
the second request waits for that gate, so the test fails on the client's deadline.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import numpy as np

from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import PYTHON_CONFIG, make_release, start_endpoint, wait_for

#: doubles x; ``finalize`` marks that it runs and waits for the gate (``{gate}``)
MODEL = """import os
import time
import numpy as np
import triton_python_backend_utils as pb_utils

GATE = {gate!r}


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "x").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("y", x * 2)]))
        return out

    def finalize(self):
        open(GATE + ".finalizing", "a").close()
        deadline = time.monotonic() + 120
        while not os.path.exists(GATE) and time.monotonic() < deadline:
            time.sleep(0.02)
"""


def _release(root: Path, gate: Path) -> Path:
    model = root / "repo" / "held"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(PYTHON_CONFIG.format(name="held"))
    (model / "1" / "model.py").write_text(MODEL.format(gate=str(gate)))
    make_release(root / "repo", root / "store", copies=2)
    return root / "store"


def _v2(url: str, name: str, x: float) -> dict[str, object]:
    """Triton's v2 JSON inference through the front, for the copy named ``name``."""
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [x]}]}
    request = urllib.request.Request(
        f"{url}/v2/models/{name}/infer", json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.loads(response.read()))


def test_a_model_triton_still_unloads_answers_under_its_own_name(tmp_path: Path) -> None:
    _runtime_or_skip()
    work = tmp_path / "state" / "local-local"  # the one directory Triton may write in
    gate = work / "tmp" / "gate"
    store = _release(tmp_path, gate)
    endpoint = start_endpoint(
        store, tmp_path / "state", "--max-loaded-models", "1", "--min-residency", "0"
    )
    repository = work / "repository"
    binary = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    try:
        first = _v2(endpoint.url, "held-0", 1.5)
        assert first["model_name"] == "held-0"
        assert _v2(endpoint.url, "held-1", 1.0)["model_name"] == "held-1"  # held-0 evicted
        wait_for(lambda: Path(f"{gate}.finalizing").exists(), 60, "held-0's finalize")
        # Triton holds held-0 UNLOADING until the gate opens: it answers now, under its alias
        again = _v2(endpoint.url, "held-0", 1.5)
        assert again == first  # the same answer, the model's own name in it
        assert (repository / "held-0~" / "config.pbtxt").is_file()
        model = endpoint.manifest.by_target_model("held-0.tar.gz")
        y = binary.infer(model, {"x": np.array([3.0], np.float32)})["y"]
        assert y.tolist() == [6.0]  # a binary answer: its JSON header's length follows
        assert endpoint.status()["loaded"] == ["held-0.tar.gz"]
        gate.touch()  # held-0's first unload ends
        assert _v2(endpoint.url, "held-1", 2.0)["outputs"]  # the alias evicted in turn
        wait_for(lambda: not (repository / "held-0~").exists(), 60, "the alias's directory")
        assert _v2(endpoint.url, "held-0", 1.5) == first  # under its own name again
        assert not (repository / "held-0~").exists()
    finally:
        gate.touch()
        binary.close()
        endpoint.stop()
