"""A release's plain ``repository/`` tree is what Triton on Kubernetes loads: downloaded as is,
started with model control mode none, every model in it must come up READY (ensembles too)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime.adapter import adapt_model_dir
from infra.triton_runtime.runtime import (
    RuntimeMissing,
    TritonProcess,
    distinct_ports,
    find_runtime,
)
from packager.manifest import MANIFEST_NAME, REPOSITORY_PREFIX, Manifest
from packager.stores import open_store
from tests.local.local_helpers import terminate

runner = CliRunner()
START_DEADLINE = 120.0  # seconds for Triton to load every model (~1.5 s each measured)


def _download_repository(url: str, out: Path) -> list[str]:
    """Fetch ``repository/`` object by object, as a sync to a pod's disk would; model names."""
    store = open_store(url)
    for key in store.list_keys(REPOSITORY_PREFIX):
        store.download(key, out / key[len(REPOSITORY_PREFIX) :])
    manifest = Manifest.from_json(store.get_bytes(MANIFEST_NAME))
    return sorted({name for model in manifest.models for name in (*model.contains, model.name)})


def _ready(port: int, name: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/models/{name}/ready", timeout=5):
            return True
    except (urllib.error.URLError, OSError):
        return False


def _live(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/live", timeout=5):
            return True
    except (urllib.error.URLError, OSError):
        return False


def test_release_repository_tree_loads_every_model_in_triton(
    sample_repo: Path, tmp_path: Path
) -> None:
    try:
        runtime = find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    url = f"file://{tmp_path / 'release'}"
    result = runner.invoke(app, ["package", str(sample_repo), "--release", url, "--copies", "2"])
    assert result.exit_code == 0, result.output
    tree = tmp_path / "pod" / "models"
    names = _download_repository(url, tree)
    assert any(name.startswith("text_pipeline-") for name in names)
    for model_dir in tree.iterdir():
        adapt_model_dir(model_dir)  # the CPU runtime's stand-in for onnxruntime; versions kept
    triton = TritonProcess(runtime, tree, tmp_path / "work", restricted=False)
    triton.workdir.mkdir()
    port, grpc, metrics = distinct_ports()
    command = [
        arg.replace("--model-control-mode=explicit", "--model-control-mode=none")
        for arg in triton.command(port, grpc, metrics)
    ]
    with (tmp_path / "triton.log").open("wb") as log:
        proc = subprocess.Popen(
            [*command, "--exit-on-error=false"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=triton.environment(),
            cwd=triton.workdir,
        )
    try:
        deadline = time.monotonic() + START_DEADLINE
        while not _live(port) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # polling a real server's health endpoint, bounded by the deadline
        with urllib.request.urlopen(
            urllib.request.Request(
                f"http://127.0.0.1:{port}/v2/repository/index", data=b"{}", method="POST"
            ),
            timeout=10,
        ) as response:
            index = {item["name"]: item for item in json.load(response)}
        not_ready = [name for name in names if not _ready(port, name)]
        log_text = (tmp_path / "triton.log").read_text(errors="replace")
        assert not_ready == [], f"{not_ready}: {[index.get(n) for n in not_ready]}\n{log_text}"
    finally:
        terminate(proc, 15)
