"""How long `tdk local down` takes with the sample models loaded (issue 40: within 1.5 s).

Each run starts a detached local endpoint on one copy of every sample model (``tdk local up
--detach``), invokes each model once so all are loaded, then times the whole ``tdk local down``
command as a user runs it (a fresh interpreter: its start-up counts) and checks that no process
of the endpoint is left (the front, Triton, its Python stubs). Prints the median and the spread
(min-max) over the runs, and where a down's time goes: the CLI's start-up (``tdk --version``)
and the rest (signal, drain, Triton's stop, clean-up).

Baseline (issue 40, 2026-11-27): 4.7-6.3 s with a model loaded (1.3 s idle).

Run: ``.venv/bin/python bench/local_down.py [--runs 7] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from invoke import make_release  # noqa: E402  (bench/invoke.py: the same sample release)

from infra.clients.inputs import example_inputs  # noqa: E402
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget  # noqa: E402
from infra.targets.local.endpoint_state import session_processes  # noqa: E402
from packager.stores import open_store  # noqa: E402
from packager.stores.capped import read_manifest  # noqa: E402

TDK = [sys.executable, "-m", "cli"]


def _tdk(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = subprocess.run([*TDK, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    return time.monotonic() - started, done


def one_run(store: Path, env: dict[str, str]) -> dict[str, Any]:
    up = ["local", "up", "--release", f"file://{store}", "--port", "0", "--detach", "--json"]
    up += ["--max-loaded-models", "16"]
    _, done = _tdk(up, env)
    if done.returncode != 0:
        raise SystemExit(f"tdk local up failed:\n{done.stdout}{done.stderr}")
    state = json.loads(done.stdout)
    manifest = read_manifest(open_store(f"file://{store}"))
    target = SageMakerRuntimeTarget("local", endpoint_url=state["url"], local=True)
    try:
        for model in manifest.models:
            target.infer(model, example_inputs(model))
    finally:
        target.close()
    session = session_processes(state["pid"])
    took, done = _tdk(["local", "down"], env)
    if done.returncode != 0:
        raise SystemExit(f"tdk local down failed:\n{done.stdout}{done.stderr}")
    left = session_processes(state["pid"])
    return {"down_s": took, "loaded": len(manifest.models), "processes": len(session),
            "left": sorted(left), "said": done.stderr.strip()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tdk-bench-down-") as tmp:
        work = Path(tmp)
        store = make_release(work)
        env = dict(os.environ, TDK_STATE_DIR=str(work / "state"))
        startup = [_tdk(["--version"], env)[0] for _ in range(args.runs)]
        runs = [one_run(store, env) for _ in range(args.runs)]
    downs = [r["down_s"] for r in runs]
    result = {
        "runs": args.runs,
        "models_loaded": runs[0]["loaded"],
        "processes_per_endpoint": runs[0]["processes"],
        "down_median_s": round(statistics.median(downs), 3),
        "down_min_s": round(min(downs), 3),
        "down_max_s": round(max(downs), 3),
        "cli_startup_median_s": round(statistics.median(startup), 3),
        "processes_left": sum(len(r["left"]) for r in runs),
        "said": sorted({r["said"] for r in runs if r["said"]}),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"tdk local down, {result['models_loaded']} models loaded "
        f"({result['processes_per_endpoint']} processes), {args.runs} runs: median "
        f"{result['down_median_s']:.2f} s (min {result['down_min_s']:.2f}, max "
        f"{result['down_max_s']:.2f}); CLI start-up alone {result['cli_startup_median_s']:.2f} s;"
        f" processes left {result['processes_left']}; baseline 4.7-6.3 s"
    )


if __name__ == "__main__":
    main()
