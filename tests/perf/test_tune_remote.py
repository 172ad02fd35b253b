"""``tdk tune --url`` against a real Triton started with explicit model control: candidates go
through the model-load API with a config override, the original config is back afterwards and
no other model is touched."""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime.adapter import adapt_model_dir
from infra.triton_runtime.runtime import RuntimeMissing, TritonProcess, find_runtime
from tests.local.local_helpers import reaped

runner = CliRunner()
pytestmark = pytest.mark.e2e
TDK = str(Path(sys.executable).with_name("tdk"))
MODELS = ("image_classifier", "tokenizer", "text_classifier")


def _call(port: int, method: str, path: str, body: object = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body))
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    return response.status, json.loads(data) if data else None


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tune records the original config under the state dir: keep it per test."""
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture
def triton(sample_repo: Path, tmp_path: Path) -> Iterator[TritonProcess]:
    try:
        runtime = find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    repo = tmp_path / "repo"
    for name in MODELS:
        shutil.copytree(sample_repo / name, repo / name)
        adapt_model_dir(repo / name)
    process = TritonProcess(runtime, repo, tmp_path / "triton", restricted=False)  # a plain Triton
    loop = asyncio.new_event_loop()  # the process's transport lives on one loop
    loop.run_until_complete(process.start())
    try:
        for name in MODELS[:2]:  # text_classifier stays unloaded
            assert _call(process.http_port, "POST", f"/v2/repository/models/{name}/load", {})[0]
        yield process
    finally:
        loop.run_until_complete(process.stop())
        loop.close()


def _state(port: int) -> dict[str, str]:
    _, index = _call(port, "POST", "/v2/repository/index", {})
    return {entry["name"]: entry.get("state", "") for entry in index}


def test_tune_url_restores_the_config_and_leaves_other_models_alone(
    triton: TritonProcess,
) -> None:
    port = triton.http_port
    before = _call(port, "GET", "/v2/models/image_classifier/config")[1]
    others = {name: state for name, state in _state(port).items() if name != "image_classifier"}
    assert others["tokenizer"] == "READY" and others["text_classifier"] != "READY"
    args = ["tune", "--url", triton.http_url, "--model", "image_classifier"]
    args += ["--latency-budget-ms", "2000", "--duration", "0.2", "-c", "1,2", "--json"]
    args += ["--max-windows", "3", "--processes", "2"]  # generator processes, stable points
    args += ["--repeats", "1", "--pairs", "1"]  # the drift probe and a duel, each once
    args += ["--instances", "1,2", "--max-batch-sizes", "8", "--queue-delays-us", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["target"] == triton.http_url and report["measurements"] >= 2
    assert report["shipped_best"] is not None and report["processes"] == 2
    assert all(p["windows"] == 3 and "client_bound" in p for p in report["points"])
    tried = {(p["config"]["instances"], p["config"]["max_batch_size"]) for p in report["points"]}
    assert len(tried) >= 2  # candidates really were loaded with overrides
    # the server serves it on the Python backend (the local ONNX adapter): nothing to accelerate
    assert [s["option"] for s in report["skipped"]] == ["accelerators"]
    assert _call(port, "GET", "/v2/models/image_classifier/config")[1] == before
    assert _call(port, "GET", "/v2/models/image_classifier/ready")[0] == 200
    after = {name: state for name, state in _state(port).items() if name != "image_classifier"}
    assert after == others


def test_tune_url_refuses_a_model_the_server_cannot_load(triton: TritonProcess) -> None:
    args = ["tune", "--url", triton.http_url, "--model", "nope", "--latency-budget-ms", "50"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "could not load nope" in result.output, result.output
    assert "READY" in _state(triton.http_port).values()


def test_sigterm_mid_tune_still_restores_the_config(triton: TritonProcess) -> None:
    port = triton.http_port
    before = _call(port, "GET", "/v2/models/image_classifier/config")[1]
    args = [TDK, "tune", "--url", triton.http_url, "--model", "image_classifier"]
    args += ["--latency-budget-ms", "2000", "--duration", "0.3", "-c", "1,2", "--search", "full"]
    args += ["--max-windows", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        assert proc.stderr is not None
        for line in proc.stderr:  # the first candidate has been loaded and measured
            if line.startswith("tune: 1/"):
                break
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM
    assert _call(port, "GET", "/v2/models/image_classifier/config")[1] == before


def test_after_a_sigkill_the_next_tune_refuses_and_restore_puts_the_config_back(
    triton: TritonProcess,
) -> None:
    port, url = triton.http_port, triton.http_url
    before = _call(port, "GET", "/v2/models/image_classifier/config")[1]
    args = [TDK, "tune", "--url", url, "--model", "image_classifier", "--search", "full"]
    args += ["--latency-budget-ms", "2000", "--duration", "0.2", "-c", "1", "--max-windows", "1"]
    args += ["--processes", "1", "--instances", "2", "--queue-delays-us", "0"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        assert proc.stderr is not None
        for line in proc.stderr:  # a candidate (2 instances) has been loaded and measured
            if line.startswith("tune: 1/"):
                break
        proc.kill()  # SIGKILL: no chance to restore
        proc.communicate(timeout=60)
    assert _call(port, "GET", "/v2/models/image_classifier/config")[1] != before
    again = ["tune", "--url", url, "--model", "image_classifier", "--latency-budget-ms", "50"]
    refused = runner.invoke(app, again)
    assert refused.exit_code != 0 and "did not finish" in refused.output, refused.output
    assert "--restore" in refused.output
    restored = runner.invoke(
        app, ["tune", "--url", url, "--model", "image_classifier", "--restore"]
    )
    assert restored.exit_code == 0, restored.output
    assert _call(port, "GET", "/v2/models/image_classifier/config")[1] == before
    nothing = runner.invoke(app, ["tune", "--url", url, "--model", "image_classifier", "--restore"])
    assert nothing.exit_code != 0 and "nothing to restore" in nothing.output
