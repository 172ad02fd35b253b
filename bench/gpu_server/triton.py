"""The runtime's Triton for the GPU check, and the raw HTTP it is probed with.

Standard library only (and the kit's Triton runtime, ``infra.triton_runtime``, which is too):
``bench/gpu_check.py`` runs on a GPU machine with no network, where the kit's dependencies may
be missing from the Python that runs it. Triton is started as every Triton of the kit is, by
``infra.triton_runtime``'s launcher; nothing here spawns ``tritonserver`` itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from infra.triton_runtime.private import write_private
from infra.triton_runtime.runtime import Runtime, TritonProcess
from tdk.errors import TdkError

#: where ``Triton`` writes its repository key for ``tdk tune --header-file`` (in its 0700 dir)
HEADER_FILE = "repository-header"
START_TIMEOUT_S = 120.0  # a GPU's first CUDA context takes a while


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


def http(
    url: str, body: object = None, timeout: float = 300, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    method = "GET" if data is None else "POST"
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
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


class GpuTriton(TritonProcess):
    """The kit's Triton process (``infra.triton_runtime``: started by its launcher, the
    repository key kept off its command line, a mount namespace where the kernel allows, dead
    with its parent) on an unpacked wheel, for the models' Python, with GPU metrics on.

    Its listeners stay on this machine's 127.0.0.1 (no network namespace): the check's tdk
    steps reach it as a remote Triton (``tdk tune --url``, ``tdk bench --url``), as a pod's is
    reached; every API but health and inference answers 403 without the key."""

    def __init__(
        self, wheel: Path, repository: Path, workdir: Path, python: dict[str, str], gpu: bool
    ) -> None:
        tritonserver = wheel / "bin" / "tritonserver"
        runtime = Runtime(
            venv=Path(python["bin"]).parent,  # its bin goes first on PATH: the stub's Python
            server=tritonserver,
            libs=wheel.parent.parent / "nvidia_pytriton.libs",
            python_backend=wheel / "backends" / "python",
            stub=wheel / "python_backend_stubs" / python["version"] / "triton_python_backend_stub",
        )
        for path in (runtime.server, runtime.libs, runtime.python_backend, runtime.stub):
            if not path.exists():
                raise SystemExit(f"gpu_check: {path} is missing (is --runtime right?)")
        super().__init__(runtime, repository, workdir, netns="off")
        self.python, self.gpu = python, gpu
        self.extra_args: list[str] = []  # --triton-arg: more tritonserver flags

    def command(self, http: int, grpc: int, metrics: int) -> list[str]:
        metrics_flag = f"--allow-gpu-metrics={'true' if self.gpu else 'false'}"
        base = [
            metrics_flag if arg.startswith("--allow-gpu-metrics=") else arg
            for arg in super().command(http, grpc, metrics)
        ]
        # nv_gpu_utilization is sampled this often
        return [*base, "--metrics-interval-ms=500", *self.extra_args]

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env.pop("VIRTUAL_ENV", None)  # the models' Python need not be a venv
        libs = [str(self.runtime.libs), self.python["libdir"], os.environ.get("LD_LIBRARY_PATH")]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(part for part in libs if part)
        env["PYTHONPATH"] = self.python["path"]  # the model Python's packages (numpy, torch)
        return env


class Triton:
    """``GpuTriton`` serving ``repository`` in explicit mode, driven synchronously; the key
    of its restricted APIs is in ``header_file`` (0600) for ``tdk tune --header-file``."""

    def __init__(
        self,
        runtime: Path,
        repository: Path,
        work: Path,
        python: dict[str, str],
        gpu: bool,
        extra_args: list[str] | None = None,
    ) -> None:
        self.repository = repository
        self.process = GpuTriton(runtime, repository, work / "triton", python, gpu)
        self.process.extra_args = list(extra_args or [])
        self.header_file = work / "triton" / HEADER_FILE
        self._loop = asyncio.new_event_loop()

    @property
    def url(self) -> str:
        return self.process.http_url

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.process.metrics_port}/metrics"

    @property
    def headers(self) -> dict[str, str]:
        """What a call to its repository, config or metadata APIs sends."""
        return dict(self.process.repository_headers)

    @property
    def protections(self) -> list[str]:
        """What the launcher put in place (``netns.PROTECTIONS``)."""
        started = self.process.started
        return sorted(started.held) if started is not None else []

    def start(self) -> None:
        try:
            self._loop.run_until_complete(self.process.start(timeout=START_TIMEOUT_S))
        except TdkError as exc:
            raise SystemExit(f"gpu_check: {exc.message}\n{self.tail()}") from exc
        lines = "".join(f"{name}: {value}\n" for name, value in self.headers.items())
        write_private(self.header_file, lines.encode())

    def load(self, model: str) -> tuple[bool, str]:
        url = f"{self.url}/v2/repository/models/{model}/load"
        status, body = http(url, {}, headers=self.headers)
        return status == 200, body[:500]

    def tail(self, lines: int = 20) -> str:
        return self.process.log_tail(lines)

    def stop(self) -> None:
        """Triton, its stubs and its shared memory gone (SIGTERM, then SIGKILL)."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self.process.stop(grace=20.0))
        finally:
            self._loop.close()
            self.header_file.unlink(missing_ok=True)


def gpu_series(metrics: str) -> dict[str, float]:
    """The ``nv_gpu_*`` samples of a metrics text, summed by name (one GPU: its values)."""
    series: dict[str, float] = {}
    for line in metrics.splitlines():
        if line.startswith("nv_gpu_"):
            name, _, value = line.rpartition(" ")
            key = name.split("{", 1)[0]
            series[key] = series.get(key, 0.0) + float(value)
    return series
