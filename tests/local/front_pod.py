"""A pod on this machine: Triton in explicit mode as its own process (the pod's second container)
and ``tdk front serve`` beside it, sharing a model directory."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.triton_runtime.runtime import TritonProcess, distinct_ports, find_runtime
from tests.local.local_helpers import ROOT, terminate

OOM_MODEL = """
class TritonPythonModel:
    def initialize(self, args):
        raise MemoryError("out of memory (a test model that never fits)")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def oom_repo(echo_repo: Path, out: Path) -> Path:
    """``out`` with a copy of ``echo`` named ``oom`` whose initialize raises MemoryError."""
    from packager.config import dump_config, load_config

    target = out / "oom"
    shutil.copytree(echo_repo / "echo", target)
    config = load_config(target / "config.pbtxt")
    config.name = "oom"
    (target / "config.pbtxt").write_text(dump_config(config))
    (target / "1" / "model.py").write_text(OOM_MODEL)
    return out


def wait_for(check: Any, what: str, timeout: float = 90.0) -> Any:
    """Poll ``check`` until it returns something truthy (a safety deadline only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


@dataclass
class Pod:
    triton: subprocess.Popen[bytes] | None
    front: subprocess.Popen[bytes]
    triton_port: int
    triton_grpc: int
    url: str
    models: Path
    log: Path

    def index(self) -> list[dict[str, Any]]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.triton_port}/v2/repository/index", data=b"{}", method="POST"
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return list(json.loads(response.read()))

    def ready_models(self) -> set[str]:
        return {item["name"] for item in self.index() if item.get("state") == "READY"}

    def metrics(self) -> str:
        return get(f"{self.url}/metrics")[1].decode()

    def status(self) -> dict[str, Any]:
        return dict(json.loads(get(f"{self.url}/tdk/status")[1]))

    def stop(self) -> None:
        terminate(self.front, 20)
        if self.triton is not None:
            terminate(self.triton, 20)


def start_triton(
    work: Path, models: Path, http: int = 0, grpc: int = 0
) -> tuple[subprocess.Popen[bytes], int, int]:
    """The wheel's tritonserver in explicit mode on ``models``, unrestricted (as in a pod);
    on the HTTP port ``http`` and the gRPC port ``grpc`` (0: free ones)."""
    models.mkdir(exist_ok=True)  # a pod's emptyDir exists before either container starts
    process = TritonProcess(find_runtime(), models, work, restricted=False)
    fresh = [port for port in distinct_ports(5) if port not in (http, grpc)]  # never one port twice
    http, grpc = http or fresh[0], grpc or fresh[1]
    command = process.command(http, grpc, fresh[2])
    log = (work / "triton.log").open("wb")
    proc = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=process.environment()
    )
    return proc, http, grpc


def start_pod(
    store: Path,
    work: Path,
    *front_args: str,
    with_triton: bool = True,
    triton_port: int = 0,
    triton_grpc: int = 0,
) -> Pod:
    """A front and its Triton as the rendered pod runs them (``infra.k8s.mme.front_args``):
    inference over Triton's HTTP port, loads over its gRPC port."""
    models = work / "models"
    triton: subprocess.Popen[bytes] | None = None
    if with_triton:
        triton, triton_port, triton_grpc = start_triton(work, models)
    # the front's port, and a gRPC one where no Triton runs: none of the Triton's ports
    port, spare = [p for p in distinct_ports(4) if p not in (triton_port, triton_grpc)][:2]
    log = work / "front.log"
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, TDK_STATE_DIR=tempfile.mkdtemp(dir=work))
    command = [sys.executable, "-m", "cli", "front", "serve", "--release", f"file://{store}"]
    command += ["--triton-url", f"http://127.0.0.1:{triton_port}", "--model-dir", str(models)]
    command += ["--triton-grpc", f"127.0.0.1:{triton_grpc or spare}"]
    command += ["--cache-dir", str(work / "cache"), "--listen", f"127.0.0.1:{port}"]
    with log.open("wb") as out:
        front = subprocess.Popen(
            [*command, *front_args], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work
        )
    return Pod(triton, front, triton_port, triton_grpc, f"http://127.0.0.1:{port}", models, log)


def wait_ready(pod: Pod) -> None:
    def ready() -> bool:
        assert pod.front.poll() is None, pod.log.read_text()
        return get(f"{pod.url}/ping")[0] == 200

    wait_for(ready, "the pod's /ping")
