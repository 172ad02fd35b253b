"""Every benchmark script runs, in a small configuration, and its last line is one JSON object
with the figures it promises. Add a row to SCRIPTS for each new ``bench/*.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.local.local_helpers import reaped

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e

#: script -> (arguments for a quick run, keys its JSON must carry); "{tmp}" is a fresh directory
SCRIPTS: dict[str, tuple[list[str], set[str]]] = {
    "bert_onnx.py": (["{tmp}/repo"], {"model", "inputs", "outputs", "sha256", "bytes"}),
    "trt_check.py": (  # here (no GPU): what is offered and missing, nothing measured
        ["--out", "{tmp}/trt.json"],
        {"tensorrt", "trtexec", "gpu", "onnxruntime_providers", "missing", "ran", "measured"},
    ),
    "churn.py": (
        ["--clients", "2", "--requests", "10", "--runs", "1"],
        {"req_per_s", "p99_s", "errors", "vs_baseline_req_per_s"},
    ),
    "validate.py": (
        ["--models", "20", "--runs", "1"],
        {"models", "validate_s", "models_per_s", "version_s", "version_over_python"},
    ),
    "package.py": (
        ["--weight-mb", "2", "--copies", "2", "--repeat", "1"],
        {"ours_s", "baseline_s", "speedup", "bytes_ratio", "republish_uploaded_bytes"},
    ),
    "invoke.py": (
        ["--quick"],
        {"front_p50_ms", "direct_p50_ms", "front_rps_c8", "direct_rps_c8", "targets_met"},
    ),
    "gpu_check.py": (  # the CPU mode of the GPU check: every step, KIND_CPU (about a minute)
        ["--cpu", "--out", "{tmp}/gpu-check.json"],
        {"mode", "steps", "triton", "gpu_metrics", "tune", "bench", "problems", "ok"},
    ),
    "tune.py": (
        ["--quick"],
        {
            "default_rps",
            "tuned_rps",
            "quick_measurements",
            "full_measurements",
            "quick_best_rps",
            "full_best_rps",
            "quick_drift",
            "speedup_rounds",
            "quick_vs_full_rounds",
            "repeat_drift",
            "repeat_noise",
            "server_cpus",
            "client_cpus",
        },
    ),
}


def test_every_bench_script_is_listed() -> None:
    assert sorted(p.name for p in (ROOT / "bench").glob("*.py")) == sorted(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_bench_script_runs(script: str, tmp_path: Path) -> None:
    args, keys = SCRIPTS[script]
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert keys <= set(report), keys - set(report)
    if script == "gpu_check.py":  # every step passed, the config was restored, one summary file
        assert report["ok"] and set(report["steps"]) == {
            "generate", "package", "serve", "tune", "bench", "invoke",
        }  # fmt: skip
        assert report["invoke"]["model"] == "gpu_mlp-0"  # one answer decoded end to end
        assert report["tune"]["config_restored"] and report["bench"]["levels"]
        assert json.loads((tmp_path / "gpu-check.json").read_text()) == report


def test_sigterm_during_a_tune_run_stops_bench_tune(tmp_path: Path) -> None:
    """The five tune runs each catch SIGTERM to report what they measured; the bench must stop
    there too, not start the next run (it did), and leave no Triton or traceback behind."""
    import os
    import signal

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "tune.py"), "--quick", "--repeats-only", "--json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    with reaped(proc):
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:  # read until the first tune run has started
            lines.append(line)
            if "tune run 1/" in line:  # the first run has begun
                break
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=120)
    said = "".join(lines) + rest
    assert proc.returncode == 128 + signal.SIGTERM, said[-3000:]
    assert "tune run 2/" not in said and "Traceback" not in said, said[-3000:]
    assert [p.name for p in tmp_path.iterdir() if p.name != ".ses"] == []  # work dirs removed
