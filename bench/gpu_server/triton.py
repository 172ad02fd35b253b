"""The runtime's Triton for the GPU check, and the raw HTTP it is probed with.

Standard library only: ``bench/gpu_check.py`` runs on a GPU machine with no network, where the
kit's dependencies may be missing from the Python that runs it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def python_facts(python: str) -> dict[str, str]:
    """Version, libpython directory, bin directory, import path and numpy version of ``python``
    (the models' stub finds that Python's packages through ``PATH``; e.g. a venv's)."""
    code = (
        "import json, os, sys, sysconfig\n"
        "try:\n    import numpy; version = numpy.__version__\n"
        "except Exception as exc:\n    version = 'not importable: %s' % str(exc)[:200]\n"
        "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], 'libdir': "
        "sysconfig.get_config_var('LIBDIR') or '', 'bin': os.path.dirname(sys.executable), "
        "'path': os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)), "
        "'numpy': version}))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return dict(json.loads(subprocess.check_output([python, "-c", code], text=True, env=env)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http(url: str, body: object = None, timeout: float = 300) -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")
    except OSError as exc:
        return 0, str(exc)


def probe(url: str, model: str) -> dict[str, Any]:
    """One raw binary inference of ``model`` (x: FP16 [1, 64] of ones) and what came back: status,
    the headers that frame a binary answer, the JSON part, and how many bytes followed it."""
    x = b"\x00\x3c" * 64  # FP16 1.0, little-endian
    header = json.dumps({
        "inputs": [{"name": "x", "shape": [1, 64], "datatype": "FP16",
                    "parameters": {"binary_data_size": len(x)}}],
        "outputs": [{"name": "y", "parameters": {"binary_data": True}}],
    }).encode()  # fmt: skip
    request = urllib.request.Request(
        f"{url}/v2/models/{model}/infer", data=header + x, method="POST",
        headers={"Inference-Header-Content-Length": str(len(header)),
                 "Content-Type": "application/octet-stream"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, headers, body = response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        status, headers, body = exc.code, exc.headers, exc.read()
    except OSError as exc:
        return {"error": str(exc)}
    split = int(headers.get("Inference-Header-Content-Length") or len(body))
    return {
        "status": status,
        "content_type": headers.get("Content-Type"),
        "inference_header_content_length": headers.get("Inference-Header-Content-Length"),
        "body_bytes": len(body),
        "json": body[:split].decode("utf-8", "replace")[:600],
        "binary_bytes": len(body) - split,
        "binary_head": body[split : split + 8].hex(),
    }


class Triton:
    """The runtime's tritonserver on 127.0.0.1 serving ``repository`` in explicit mode."""

    def __init__(self, runtime: Path, repository: Path, work: Path, python: dict[str, str]):
        self.runtime, self.repository, self.work, self.python = runtime, repository, work, python
        self.extra_args: list[str] = []  # --triton-arg: more tritonserver flags
        self.http, self.grpc, self.metrics = free_port(), free_port(), free_port()
        self.shm_prefix = f"tdkcheck{os.getpid()}_"
        self.log = work / "triton.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics}/metrics"

    def _backends(self) -> Path:
        python = self.work / "backends" / "python"
        python.mkdir(parents=True, exist_ok=True)
        source = self.runtime / "backends" / "python"
        stub = self.runtime / "python_backend_stubs" / self.python["version"]
        links = {
            "libtriton_python.so": source / "libtriton_python.so",
            "triton_python_backend_utils.py": source / "triton_python_backend_utils.py",
            "triton_python_backend_stub": stub / "triton_python_backend_stub",
        }
        for name, target in links.items():
            if not target.exists():
                raise SystemExit(f"gpu_check: {target} is missing (is --runtime right?)")
            (python / name).symlink_to(target)
        return self.work / "backends"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
        env["PATH"] = os.pathsep.join([self.python["bin"], env.get("PATH", "")])
        libs = [str(self.runtime.parent.parent / "nvidia_pytriton.libs"), self.python["libdir"]]
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*libs, env.get("LD_LIBRARY_PATH", "")])
        env["PYTHONPATH"] = self.python["path"]  # the model Python's packages (numpy, torch)
        return env

    def start(self, gpu: bool) -> None:
        command = [
            str(self.runtime / "bin" / "tritonserver"),
            f"--model-repository={self.repository}",
            "--model-control-mode=explicit",
            f"--backend-directory={self._backends()}",
            "--http-address=127.0.0.1",
            f"--http-port={self.http}",
            "--grpc-address=127.0.0.1",
            f"--grpc-port={self.grpc}",
            "--metrics-address=127.0.0.1",
            f"--metrics-port={self.metrics}",
            f"--allow-gpu-metrics={'true' if gpu else 'false'}",
            "--metrics-interval-ms=500",  # nv_gpu_utilization is sampled this often
            f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}",
            "--allow-sagemaker=false",
            "--allow-vertex-ai=false",
            "--strict-readiness=false",
            "--exit-timeout-secs=5",
            *self.extra_args,
        ]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=self._env(),
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"gpu_check: Triton exited at start:\n{self.tail()}")
            if http(f"{self.url}/v2/health/live", timeout=2)[0] == 200:
                return
            time.sleep(0.2)
        raise SystemExit(f"gpu_check: Triton did not come up in 120 s:\n{self.tail()}")

    def load(self, model: str) -> tuple[bool, str]:
        status, body = http(f"{self.url}/v2/repository/models/{model}/load", {})
        return status == 200, body[:500]

    def tail(self, lines: int = 20) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for region in Path("/dev/shm").glob(f"{self.shm_prefix}*"):
            region.unlink(missing_ok=True)


def gpu_series(metrics: str) -> dict[str, float]:
    """The ``nv_gpu_*`` samples of a metrics text, summed by name (one GPU: its values)."""
    series: dict[str, float] = {}
    for line in metrics.splitlines():
        if line.startswith("nv_gpu_"):
            name, _, value = line.rpartition(" ")
            key = name.split("{", 1)[0]
            series[key] = series.get(key, 0.0) + float(value)
    return series
