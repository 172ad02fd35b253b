"""Helpers: a release published by `tdk package`'s publisher, and a running endpoint."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME
from packager.manifest import MANIFEST_NAME, Manifest

#: releases built this test run, by (repository digest, copies): the publisher runs once per
#: distinct input and every caller gets its own copy (tests mutate their release freely)
_BUILT: dict[tuple[str, int], Path] = {}
_BUILD_ROOT: list[Path] = []
#: releases the publisher built this run, and make_release calls (tests/conftest.py reports them)
BUILD_COUNT = [0]
CALL_COUNT = [0]


def _model_dirs(repo: Path, only: tuple[str, ...]) -> list[Path]:
    found = sorted(p for p in repo.iterdir() if (p / CONFIG_NAME).is_file())
    if only:
        found = [p for p in found if p.name in only]
        missing = set(only) - {p.name for p in found}
        assert not missing, f"make_release: no model {sorted(missing)} in {repo}"
    return found


def _digest(model_dirs: list[Path]) -> str:
    """sha256 over every file's relative path and bytes: the release's whole input."""
    digest = hashlib.sha256()
    for model_dir in model_dirs:
        for path in sorted(model_dir.rglob("*")):
            digest.update(str(path.relative_to(model_dir.parent)).encode() + b"\0")
            digest.update(b"d" if path.is_dir() else path.read_bytes())
    return digest.hexdigest()


def _build(model_dirs: list[Path], copies: int) -> Path:
    """Publish ``model_dirs`` with the real publisher (``tdk package``'s) into a cached store."""
    from packager.publish import publish
    from packager.stores import open_store

    if not _BUILD_ROOT:
        _BUILD_ROOT.append(Path(tempfile.mkdtemp(prefix="tdk-test-releases-")))
        atexit.register(shutil.rmtree, _BUILD_ROOT[0], True)
    work = Path(tempfile.mkdtemp(dir=_BUILD_ROOT[0]))
    inputs = work / "repo"
    inputs.mkdir()
    for model_dir in model_dirs:  # only the models asked for (an ensemble's need to be asked)
        shutil.copytree(model_dir, inputs / model_dir.name, symlinks=True)
    store = work / "store"
    publish([inputs], open_store(f"file://{store}"), copies=copies)
    BUILD_COUNT[0] += 1
    return store


def make_release(
    repo: Path,
    dest: Path,
    copies: int,
    only: tuple[str, ...] = (),
) -> Manifest:
    """``copies`` renamed copies of every model in ``repo`` (or those in ``only``), published
    by the real publisher into ``dest``. The same input is published once per test run and
    copied to each caller's ``dest``."""
    CALL_COUNT[0] += 1
    model_dirs = _model_dirs(repo, only)
    key = (_digest(model_dirs), copies)
    if key not in _BUILT:
        _BUILT[key] = _build(model_dirs, copies)
    shutil.copytree(_BUILT[key], dest, dirs_exist_ok=True)
    return Manifest.from_json((dest / MANIFEST_NAME).read_text())


ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Endpoint:
    """A running `python -m infra.targets.local.serve` child."""

    proc: subprocess.Popen[bytes]
    url: str
    store: Path
    manifest: Manifest
    state_dir: Path
    log: Path

    @property
    def cwd(self) -> Path:
        """The endpoint process's working directory: empty at start, for "writes nothing" checks
        (the repository's own tree is no place to look: other work writes there)."""
        return self.state_dir / "cwd"

    def client(self, attempts: int = 1, read_timeout: float = 60) -> Any:
        """boto3 ``sagemaker-runtime`` for this endpoint (``read_timeout``: botocore's 60 s
        unless a test lets the endpoint hold requests longer, e.g. ``--capacity-timeout``)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "sagemaker-runtime",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(
                retries={"total_max_attempts": attempts, "mode": "standard"},
                max_pool_connections=64,
                read_timeout=read_timeout,
            ),
        )

    def status(self) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/tdk/status", timeout=10) as response:
            return dict(json.loads(response.read()))

    def triton(self, name: str = "local") -> dict[str, Any]:
        """Its Triton: ``pid``, ``http_port``, ``grpc_port``, ``repository_header`` (a private
        file in the work dir; ``/tdk/status`` does not say)."""
        path = self.state_dir / f"local-{name}" / "triton.json"
        return dict(json.loads(path.read_text()))

    def stop(self) -> None:
        terminate(self.proc, 20)


def start_endpoint(
    store: Path, state_dir: Path, *args: str, name: str = "local", wrapper: tuple[str, ...] = ()
) -> Endpoint:
    """Start an endpoint on a free port and wait for its state file (``wrapper``: a command
    that runs it, e.g. in a namespace that refuses Triton one of its own)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "cwd").mkdir(exist_ok=True)  # Endpoint.cwd
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, TDK_STATE_DIR=str(state_dir), PYTHONPATH=path)
    log = state_dir / f"serve-{name}.log"
    command = [
        sys.executable,
        "-m",
        "infra.targets.local.serve",
        "--release",
        str(store),
        "--name",
        name,
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*wrapper, *command, "--port", "0", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=state_dir / "cwd",
        )
    state_file = state_dir / f"local-{name}.json"
    state_file.unlink(missing_ok=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state_file.exists():
            state = json.loads(state_file.read_text())
            manifest = Manifest.from_json((store / "manifest.json").read_text())
            return Endpoint(proc, state["url"], store, manifest, state_dir, log)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"endpoint did not start:\n{log.read_text()}")


PYTHON_CONFIG = """name: "{name}"
backend: "python"
max_batch_size: 0
input {{ name: "x" data_type: TYPE_FP32 dims: [ 1 ] }}
output {{ name: "y" data_type: TYPE_FP32 dims: [ 1 ] }}
instance_group {{ kind: KIND_CPU count: 1 }}
"""

PYTHON_MODEL = """import os
import time
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.executing = os.path.join(args["model_repository"], "executing")
        {initialize}

    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "x").as_numpy()
            with open(self.executing, "w") as marker:  # tests poll for it
                marker.write(str(os.getpid()))
            time.sleep(float(x[0]))
            y = pb_utils.Tensor("y", (x * 2).astype(np.float32))
            responses.append(pb_utils.InferenceResponse(output_tensors=[y]))
        return responses
"""


def write_python_model(repo: Path, name: str, initialize: str = "pass") -> Path:
    """A tiny Python-backend model: ``y = 2 * x`` after sleeping ``x`` seconds; it writes
    ``<model dir>/executing`` (its stub's pid) when a request starts executing."""
    model = repo / name
    (model / "1").mkdir(parents=True, exist_ok=True)
    (model / "config.pbtxt").write_text(PYTHON_CONFIG.format(name=name))
    (model / "1" / "model.py").write_text(PYTHON_MODEL.format(initialize=initialize))
    return model


def python_release(root: Path, *names: str, copies: int = 1) -> Path:
    """A release in ``root/store`` of ``copies`` copies of each Python model ``names``
    (write_python_model, in ``root/repo``)."""
    repo = root / "repo"
    for name in names:
        write_python_model(repo, name)
    store = root / "store"
    make_release(repo, store, copies=copies)
    return store


@contextmanager
def python_endpoint(
    root: Path,
    *names: str,
    copies: int = 1,
    args: tuple[str, ...] = (),
    wrapper: tuple[str, ...] = (),
) -> Iterator[Endpoint]:
    """An endpoint (start_endpoint's ``args`` and ``wrapper``, its state in ``root/state``)
    serving python_release(root, *names, copies=copies); stopped on exit."""
    store = python_release(root, *names, copies=copies)
    running = start_endpoint(store, root / "state", *args, wrapper=wrapper)
    try:
        yield running
    finally:
        running.stop()


def infer_sleeper(endpoint: Endpoint) -> list[float]:
    """``y`` for ``x = 0`` from copy ``sleeper-0`` through the SageMaker runtime client."""
    import numpy as np

    from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget

    model = endpoint.manifest.by_target_model("sleeper-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    try:
        return list(target.infer(model, {"x": np.array([0.0], np.float32)})["y"].tolist())
    finally:
        target.close()


def children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition: Any, timeout: float, what: str) -> Any:
    """Poll ``condition()`` until truthy; AssertionError naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def terminate(proc: subprocess.Popen[Any], grace: float) -> None:
    """SIGTERM ``proc`` if it still runs, SIGKILL it after ``grace`` s; reaped either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def reaped(proc: subprocess.Popen[Any]) -> Iterator[subprocess.Popen[Any]]:
    """``proc``, killed and waited for on the way out if it still runs (only when the test
    already failed: a passing test has ended it)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:  # pragma: no cover - only when the test already failed
            proc.kill()
            proc.wait()
