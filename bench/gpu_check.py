"""The GPU check: package the GPU sample, serve it with the local runtime's Triton on the GPU,
read the GPU metrics, run ``tdk tune --url`` and ``tdk bench``, and write one JSON summary.

    PYTHONPATH=. python bench/gpu_check.py --out gpu-check.json [--runtime DIR] [--deps DIR]
    .venv/bin/python bench/gpu_check.py --cpu --out cpu-check.json     # the same steps, KIND_CPU

Made for a machine with a GPU and no network: this script itself uses only the standard library;
each step runs as a child process. What the steps need:

- ``--runtime DIR``: an unpacked ``nvidia-pytriton`` 0.7.0 wheel's ``pytriton/tritonserver``
  (Triton 2.51; its libraries in the sibling ``nvidia_pytriton.libs``). Default: this checkout's
  ``.venv-triton``.
- The tdk steps (generate, package, tune, bench) run ``python -m cli`` from this checkout; with
  ``--deps DIR`` (e.g. ``pip install --target DIR`` of carried wheels) they find their packages
  there: typer, rich, protobuf, numpy, onnx, tritonclient[http], urllib3/gevent as tritonclient
  pulls them, PyYAML and the rest of pyproject's base dependencies.
- The models run in the Python given by ``--model-python`` (default: this one; with ``--cpu``
  and no flag, the runtime venv's): its ``bin`` goes first on Triton's ``PATH``, its
  site-packages on Triton's ``PYTHONPATH`` (numpy; torch for ``gpu_mlp`` on a GPU), and its
  ``libpython3.X.so`` directory on ``LD_LIBRARY_PATH``; Triton uses the wheel's stub for that
  Python's version (``python_backend_stubs/3.X``; the wheel carries 3.8-3.13).
FP16 tensors have no JSON form in Triton's HTTP API: tune and bench use the binary codec.
Triton is started as every Triton of the kit is, by ``infra.triton_runtime``'s launcher (standard
library only too): its repository key never on a command line (the tune step reads it from a
0600 file, ``--header-file``), a mount namespace where the kernel allows, and it dies with this
script (SIGKILL included); SIGTERM and Ctrl-C stop it and remove the work directory.
Exit status 0 when every required step passed; the summary lists each step and what failed;
130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT)]  # gpu_server, infra: a script

from gpu_server.triton import Triton, gpu_series, http, probe, python_facts  # noqa: E402

MODEL = "gpu_mlp-0"  # the Python-backend torch model as `tdk package` names its first copy
ECHO_MODEL = "gpu_echo-0"  # the same tensors from a numpy-only Python model (the probe's control)
ONNX_MODEL = "gpu_onnx-0"
ECHO_CPU = "gpu_echo_cpu"  # gpu_echo on a KIND_CPU instance of the same server
STEP_TIMEOUT_S = 900


def _run(
    args: list[str], env: dict[str, str], timeout: float = STEP_TIMEOUT_S
) -> tuple[int, str, str]:
    done = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )
    return done.returncode, done.stdout, done.stderr


def _cpu_twin(repository: Path, model: str) -> str:
    """Copy ``model`` in the served repository as ``ECHO_CPU`` with a KIND_CPU instance."""
    twin = repository / ECHO_CPU
    shutil.copytree(repository / model, twin)
    config = (twin / "config.pbtxt").read_text(encoding="utf-8")
    config = config.replace(f'"{model}"', f'"{ECHO_CPU}"').replace("KIND_GPU", "KIND_CPU")
    (twin / "config.pbtxt").write_text(config, encoding="utf-8")
    return ECHO_CPU


def _tdk_env(deps: list[Path], work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *(str(d) for d in deps)])
    env["TDK_STATE_DIR"] = str(work / "state")  # where tune --url records the original config
    return env


def _default_runtime() -> Path:
    found = sorted(
        (ROOT / ".venv-triton").glob("lib/python3.*/site-packages/pytriton/tritonserver")
    )
    if not found:
        raise SystemExit("gpu_check: no .venv-triton here: give --runtime DIR")
    return found[-1]


#: how hard each mode searches: (concurrency, window s, max windows, instances, batch sizes, delays)
SIZES = {
    "gpu": ("1,4,16", "1.0", "6", "1,2", "8,32", "0,500"),
    "cpu": ("1,4", "0.3", "3", "1,2", "32", "0"),
}


class Check:
    """The steps, each recorded in ``summary["steps"]``; a failed step stops those after it."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.mode = "cpu" if args.cpu else "gpu"
        self.env = _tdk_env(args.deps, work)
        self.summary: dict[str, Any] = {"mode": self.mode, "python": sys.version.split()[0]}
        self.summary["steps"] = {}
        self.problems: list[str] = []

    def step(self, name: str, args: list[str]) -> str | None:
        started = time.monotonic()
        code, out, err = _run([sys.executable, *args], self.env)
        took = round(time.monotonic() - started, 2)
        self.summary["steps"][name] = {"ok": code == 0, "seconds": took}
        if code != 0:
            self.problems.append(f"{name} failed ({code}): {err.strip()[-1500:]}")
            return None
        return out

    def tdk_json(self, name: str, args: list[str]) -> dict[str, Any] | None:
        out = self.step(name, ["-m", "cli", *args, "--json"])
        return None if out is None else dict(json.loads(out))

    def prepare(self) -> Path | None:
        repo, store = self.work / "repo", self.work / "store"
        gen = ["model_repos/generate.py", "--out", str(repo), "--with", "gpu", "--kind", self.mode]
        if self.step("generate", gen) is None:
            return None
        if self.step(
            "package", ["-m", "cli", "package", str(repo), "--release", f"file://{store}"]
        ):
            return store
        return None

    def serve(self, triton: Triton) -> bool:
        started = time.monotonic()
        triton.start()
        self.summary["triton_protections"] = triton.protections
        loaded, reply = triton.load(MODEL)
        onnx_loaded, onnx_reply = triton.load(ONNX_MODEL)
        echo_loaded, echo_reply = triton.load(ECHO_MODEL)
        cpu_loaded, cpu_reply = triton.load(_cpu_twin(triton.repository, ECHO_MODEL))
        self.summary["steps"]["serve"] = {
            "ok": loaded, "seconds": round(time.monotonic() - started, 2),
        }  # fmt: skip
        _, server = http(f"{triton.url}/v2", headers=triton.headers)
        self.summary["triton"] = json.loads(server).get("version") if server[:1] == "{" else None
        # the wheel's Triton has no onnxruntime backend: gpu_onnx loads only where one exists
        self.summary["onnx_model"] = {
            "loaded": onnx_loaded,
            "reply": "" if onnx_loaded else onnx_reply,
        }
        if not loaded:
            self.problems.append(f"{MODEL} did not load: {reply}\n{triton.tail()}")
        # one raw exchange per model, recorded as it came: shows where an answer loses its data
        self.summary["probe"] = {
            name: probe(triton.url, name) if ok else {"loaded": False, "reply": why}
            for name, ok, why in (
                (MODEL, loaded, reply), (ECHO_MODEL, echo_loaded, echo_reply),
                (ONNX_MODEL, onnx_loaded, onnx_reply), (ECHO_CPU, cpu_loaded, cpu_reply),
            )
        }  # fmt: skip
        answer = self.summary["probe"][MODEL]
        if loaded and answer.get("status") == 200 and not answer.get("binary_bytes"):
            self.problems.append(
                f"{MODEL} answered an empty output ({answer.get('json', '')[-80:]}); the models' "
                f"Python has numpy {self.summary.get('model_numpy')}, and Triton 2.51's Python "
                "backend answers empty outputs with numpy 2 (docs/performance.md): give "
                "--model-python a venv with numpy<2"
            )
            return False  # tune and bench would count answers that carry nothing
        return loaded

    def gpu_metrics(self, triton: Triton) -> None:
        status, text = http(triton.metrics_url)
        series = gpu_series(text) if status == 200 else {}
        self.summary["gpu_metrics"] = series
        self.summary["device"] = _device()
        if self.mode == "gpu" and "nv_gpu_utilization" not in series:
            self.problems.append("Triton exported no nv_gpu_utilization: is the GPU visible?")

    def tune_and_bench(self, triton: Triton, store: Path) -> None:
        levels, window, windows, instances, sizes, delays = SIZES[self.mode]
        config = f"{triton.url}/v2/models/{MODEL}/config"
        before = http(config, headers=triton.headers)[1]
        tune = self.tdk_json("tune", [
            "tune", "--url", triton.url, "--model", MODEL, "--metrics-url", triton.metrics_url,
            "--latency-budget-ms", "1000", "-c", levels, "--duration", window,
            "--max-windows", windows, "--instances", instances, "--max-batch-sizes", sizes,
            "--queue-delays-us", delays, "--header-file", str(triton.header_file),
        ])  # fmt: skip
        if tune is not None:
            self.summary["tune"] = _tune_summary(tune)
            restored = http(config, headers=triton.headers)[1] == before
            self.summary["tune"]["config_restored"] = restored
            if not restored:
                self.problems.append("tune --url did not restore the model's config")
        bench = self.tdk_json("bench", [
            "bench", "--target", "gke", "--url", triton.url, "--release", f"file://{store}",
            "--target-model", f"{MODEL}.tar.gz", "-c", levels, "--duration", window,
            "--max-windows", windows,
        ])  # fmt: skip
        if bench is not None:
            self.summary["bench"] = _bench_summary(bench)
            errors = sum(sum(level["errors"].values()) for level in bench["levels"])
            if errors:  # a 200 that does not decode is a failure, not throughput
                self.problems.append(f"bench saw {errors} failed requests")
        invoke = self.tdk_json("invoke", [
            "invoke", "--target", "gke", "--url", triton.url, "--release", f"file://{store}",
            "--target-model", f"{MODEL}.tar.gz", "--example",
        ])  # fmt: skip
        if invoke is not None:  # one request decoded end to end, as a user would send it
            self.summary["invoke"] = {k: str(v)[:200] for k, v in invoke.items()}


def _device() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=False,
        ).stdout  # fmt: skip
    except OSError:
        return None
    return out.strip() or None


_POINT = ("label", "concurrency", "throughput_rps", "p99_ms", "spread", "stable", "client_bound")


def _tune_summary(report: dict[str, Any]) -> dict[str, Any]:
    points = [*report["shipped_points"], *report["points"]]
    utils = [p["gpu_utilization"] for p in points if p.get("gpu_utilization") is not None]
    pick = report["choice"] or {}
    return {
        "shipped_best": {k: report["shipped_best"][k] for k in _POINT}
        if report["shipped_best"]
        else None,
        "choice": {k: pick[k] for k in _POINT} if pick else None,
        "speedup": report["speedup"],
        "configs_measured": report["configs_measured"],
        "measurements": report["measurements"],
        "unstable_points": report["unstable_points"],
        "client_bound": report["client_bound"],
        "inside_noise": report["inside_noise"],
        "drift": report["drift"],
        "duels": report["duels"],
        "max_gpu_utilization": max(utils, default=None),
        "notes": report["notes"],
    }


def _bench_summary(record: dict[str, Any]) -> dict[str, Any]:
    keep = ("level", "throughput_rps", "p50_ms", "p99_ms", "windows", "spread", "stable")
    levels = [
        {
            **{k: level[k] for k in keep},
            "client_bound": level["client_bound"],
            "errors": level["errors"],
        }
        for level in record["levels"]
    ]
    return {
        "processes": record["processes"],
        "client_bound": record["client_bound"],
        "levels": levels,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tdk-gpu-check-") as tmp:
        work = Path(tmp)
        check = Check(args, work)
        started = time.monotonic()
        store = check.prepare()
        if store is not None:
            facts = python_facts(args.model_python or _model_python(args))
            check.summary["model_python"] = facts["version"]
            check.summary["model_numpy"] = facts["numpy"]  # the stub's pybind11 meets this numpy
            runtime = (args.runtime or _default_runtime()).resolve()  # links below point into it
            gpu = check.mode == "gpu"
            triton = Triton(runtime, store / "repository", work, facts, gpu, args.triton_arg)
            try:
                if check.serve(triton):
                    check.gpu_metrics(triton)
                    if not args.probe_only:
                        check.tune_and_bench(triton, store)
                check.summary["triton_log_tail"] = triton.tail(40) if args.probe_only else None
            finally:
                triton.stop()
        check.summary["seconds"] = round(time.monotonic() - started, 1)
        check.summary["problems"] = check.problems
        check.summary["ok"] = not check.problems
        return check.summary


def _model_python(args: argparse.Namespace) -> str:
    venv_python = ROOT / ".venv-triton" / "bin" / "python"
    if args.cpu and args.runtime is None and venv_python.exists():
        return str(venv_python)
    return sys.executable


def _stop(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="write the JSON summary here")
    parser.add_argument("--cpu", action="store_true", help="the same steps with KIND_CPU")
    parser.add_argument("--runtime", type=Path, help="an unpacked wheel's pytriton/tritonserver")
    parser.add_argument(
        "--deps", type=Path, action="append", default=[], help="packages for the tdk steps"
    )
    parser.add_argument(
        "--triton-arg", action="append", default=[], help="one more tritonserver flag (repeatable)"
    )
    parser.add_argument(
        "--probe-only", action="store_true", help="serve and probe the models; no tune or bench"
    )
    parser.add_argument("--model-python", help="the Python whose packages the models import")
    parser.add_argument("--json", action="store_true", help="also print the summary (one line)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)  # as Ctrl-C: Triton stopped, the work dir removed
    try:
        summary = run(args)
    except KeyboardInterrupt:
        print("gpu_check: interrupted; Triton stopped", file=sys.stderr)
        return 130
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(summary))
    else:
        status = "passed" if summary["ok"] else "FAILED: " + "; ".join(summary["problems"])
        print(f"gpu_check ({summary['mode']}): {status}; summary in {args.out}")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
