"""Helpers: a small release laid out as `tdk package` writes it, and a running endpoint."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME, backend_of, datatype_name, dump_config, load_config
from packager.manifest import Manifest, ManifestModel, TensorSpec


def _specs(tensors: Any) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(t.name, datatype_name(t.data_type), tuple(int(d) for d in t.dims))
        for t in tensors
    )


def _add_dir(tar: tarfile.TarFile, source: Path, name: str, config: Any) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    tar.addfile(info)
    for path in sorted(source.rglob("*")):
        arcname = f"{name}/{path.relative_to(source).as_posix()}"
        if path.is_dir():
            info = tarfile.TarInfo(arcname)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
            continue
        data = (
            dump_config(config).encode()
            if path.name == CONFIG_NAME and path.parent == source
            else path.read_bytes()
        )
        info = tarfile.TarInfo(arcname)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))


def make_release(repo: Path, dest: Path, copies: int, only: tuple[str, ...] = ()) -> Manifest:
    """``copies`` renamed copies of every model in ``repo`` (or those in ``only``)."""
    entries = []
    (dest / "mme").mkdir(parents=True, exist_ok=True)
    for model_dir in sorted(p for p in repo.iterdir() if (p / CONFIG_NAME).is_file()):
        if only and model_dir.name not in only:
            continue
        for index in range(copies):
            config = load_config(model_dir / CONFIG_NAME)
            name = f"{model_dir.name}-{index}"
            config.name = name
            members: list[tuple[Path, str, Any]] = []
            for step in config.ensemble_scheduling.step:
                composing = load_config(repo / step.model_name / CONFIG_NAME)
                new = f"{name}.{step.model_name}"
                composing.name = new
                members.append((repo / step.model_name, new, composing))
                step.model_name = new
            members.append((model_dir, name, config))
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
                for source, member, member_config in members:
                    _add_dir(tar, source, member, member_config)
            data = buffer.getvalue()
            (dest / "mme" / f"{name}.tar.gz").write_bytes(data)
            entries.append(
                ManifestModel(
                    target_model=f"{name}.tar.gz",
                    name=name,
                    source=model_dir.name,
                    copy=index,
                    sha256=hashlib.sha256(data).hexdigest(),
                    size=len(data),
                    archive=f"mme/{name}.tar.gz",
                    backend=backend_of(config),
                    platform=config.platform,
                    max_batch_size=config.max_batch_size,
                    inputs=_specs(config.input),
                    outputs=_specs(config.output),
                    contains=tuple(m[1] for m in members) if len(members) > 1 else (),
                )
            )
    manifest = Manifest(
        models=tuple(entries), created_at="2026-01-01T00:00:00+00:00", tool_version="test"
    )
    (dest / "manifest.json").write_text(manifest.to_json())
    return manifest


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

    def client(self, attempts: int = 1) -> Any:
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
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_endpoint(store: Path, state_dir: Path, *args: str, name: str = "local") -> Endpoint:
    """Start an endpoint on a free port and wait for its state file."""
    state_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TDK_STATE_DIR=str(state_dir))
    log = state_dir / f"serve-{name}.log"
    command = [
        sys.executable,
        "-m",
        "infra.targets.local.serve",
        "--store",
        str(store),
        "--name",
        name,
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*command, "--port", "0", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
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
