"""What the bench smoke tests run: every benchmark script, in a small configuration, whose last
line is one JSON object with the figures it promises, each within the bounds a working run can
give (BOUNDS: wide enough for a loaded 2-core machine, narrow enough that a zero, a negative, a
NaN or a figure that contradicts its neighbours fails). Add a row to SCRIPTS and BOUNDS for each
new ``bench/*.py``; the long runs each have a test file of their own (LONG) so that the test
processes share them out."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

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
        {
            *("front_p50_ms", "direct_p50_ms", "front_rps_c8", "direct_rps_c8", "targets_met"),
            *("front_cpu_ms_per_request", "triton_cpu_ms_per_request", "front_cpu_over_triton"),
            *("pinned_front_rps_c8", "pinned_direct_rps_c8", "pinned_front_over_direct"),
            # the same for a BERT-shaped encoder, beside (never instead of) the small sample
            *("front_cost_model", "bert_front_cost_model", "front_cost_targets_met"),
            *("bert_front_cpu_ms_per_request", "bert_triton_cpu_ms_per_request"),
            *("bert_front_cpu_over_triton", "bert_pinned_front_rps_c8"),
            *("bert_pinned_direct_rps_c8", "bert_pinned_front_over_direct"),
            # what the front waited for a CPU, and the machine's load: a shared core's cost
            *("front_cpu_wait_ms_per_request", "bert_front_cpu_wait_ms_per_request"),
            "load_average_1m",
        },
    ),
    "gpu_check.py": (  # the CPU mode of the GPU check: every step, KIND_CPU (about a minute)
        ["--cpu", "--out", "{tmp}/gpu-check.json"],
        {"mode", "steps", "triton", "gpu_metrics", "tune", "bench", "problems", "ok"},
    ),
    "local_down.py": (
        ["--runs", "1"],
        {"down_median_s", "down_min_s", "down_max_s", "models_loaded", "processes_left"},
    ),
    "tune.py": (
        # the smoke checks the search and its report, not this machine's latency: at load 4+
        # the 50 ms default budget met no point (a quick run exited "met no point within the
        # budget"); quick mode's two concurrency levels make a wide budget no longer a run
        ["--quick", "--budget-ms", "2000"],
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
    "tune_netns.py": (  # two rounds of short windows: checks the report, not the cost
        ["--rounds", "2", "--duration", "0.5"],
        {
            *("concurrency", "duration_s", "rounds", "load_average"),
            *("loopback_rps", "namespace_rps", "loopback_median_rps", "namespace_median_rps"),
            *("ratio_median", "ratio_min", "ratio_max"),
        },
    ),
    "mme_k8s.py": (
        # a short run: two replicas with room for three copies each, a third joining and the
        # first leaving mid-run; checks the report and the invariants, not speed
        [
            *("--copies", "24", "--replicas", "2", "--budget", "3", "--requests", "60"),
            *("--warmup", "12"),
            *("--clients", "4", "--trace-out", "{tmp}/trace.txt"),
        ],
        {
            "hit_ratio",
            "round_robin_hit_ratio",
            "cold_p99_ms",
            "cold_over_own_load_p99",
            "warm_p50_ms",
            "overhead_p50_ms",
            "max_loaded_per_replica",
            "budget",
            "failed",
            "load_times",
            "trace",
            "cold_requests",
            "loads",
            "round_robin_failed",
            "round_robin_max_loaded_per_replica",
        },
    ),
}


INF = math.inf
#: script -> figure -> (least, most), inclusive; a list figure: each of its values
BOUNDS: dict[str, dict[str, tuple[float, float]]] = {
    "bert_onnx.py": {"bytes": (1, 1e9)},
    "trt_check.py": {},  # here nothing is measured: see _consistent
    "churn.py": {
        "errors": (0, 0),
        "req_per_s": (0.01, 1e5),
        "p99_s": (1e-6, 300),
        "vs_baseline_req_per_s": (0, 1e4),
    },
    "validate.py": {
        "models": (20, 20),
        "validate_s": (1e-4, 300),
        "models_per_s": (0.05, 1e6),
        "version_s": (1e-4, 60),
        "version_over_python": (1e-3, 1e4),
    },
    "package.py": {
        "ours_s": (1e-3, 300),
        "baseline_s": (1e-3, 300),
        "speedup": (0.01, 1e3),
        "bytes_ratio": (0.5, 2.0),  # deterministic gzip against tarfile's: the same order
        "republish_uploaded_bytes": (0, 0),  # an unchanged republish sends nothing
    },
    "invoke.py": {
        "front_p50_ms": (1e-3, 5000),
        "direct_p50_ms": (1e-3, 5000),
        "front_rps_c8": (0.1, 1e6),
        "direct_rps_c8": (0.1, 1e6),
        # the front's cost windows serve something (a factory mix-up once served nothing)
        "pinned_front_rps_c8": (0.1, 1e6),
        "pinned_direct_rps_c8": (0.1, 1e6),
        "front_cpu_ms_per_request": (0, 1e4),
        "triton_cpu_ms_per_request": (0, 1e4),
        "bert_pinned_front_rps_c8": (0.1, 1e6),
        "bert_pinned_direct_rps_c8": (0.1, 1e6),
        "bert_front_cpu_ms_per_request": (1e-6, 1e4),  # a process clock: some, never none
        "bert_triton_cpu_ms_per_request": (1e-6, 1e4),
        "bert_front_cpu_over_triton": (1e-6, 1e3),
        "front_cpu_wait_ms_per_request": (0, 1e4),
        "bert_front_cpu_wait_ms_per_request": (0, 1e4),
        "load_average_1m": (0, 1e4),
    },
    "gpu_check.py": {},  # checked step by step in run_script
    "local_down.py": {
        "down_median_s": (1e-3, 120),
        "models_loaded": (1, 1000),
        "processes_left": (0, 0),  # a down that leaves a process behind fails
    },
    "mme_k8s.py": {
        "failed": (0, 0),  # no request fails while a replica joins and one leaves
        "round_robin_failed": (0, 0),
        "max_loaded_per_replica": (1, 3),  # never above --budget 3
        "round_robin_max_loaded_per_replica": (1, 3),
        "hit_ratio": (0, 1),
        "round_robin_hit_ratio": (0, 1),
        "loads": (1, 60),
        "cold_p99_ms": (1e-3, 300_000),
        "cold_over_own_load_p99": (0.5, 1000),  # a cold request against its own load
    },
    "tune_netns.py": {
        "rounds": (2, 2),
        "loopback_rps": (0, 1e6),  # one 0.5 s window may serve nothing on a loaded machine
        "namespace_rps": (0, 1e6),
        "ratio_median": (0, 1e3),
        "ratio_min": (0, 1e3),
        "ratio_max": (0, 1e3),
    },
    "tune.py": {
        # medians of rounds of 0.1 s windows: one can serve nothing on a loaded machine
        # (measured: tuned_rps 0.0 once beside another test, 287 alone), so >= 0 here and
        # some throughput overall in _consistent
        "default_rps": (0, 1e6),
        "tuned_rps": (0, 1e6),
        "quick_best_rps": (0, 1e6),
        "full_best_rps": (0, 1e6),
        "quick_measurements": (1, 10_000),
        "full_measurements": (1, 10_000),
        "speedup_rounds": (0, 1e3),  # 0.0 where the shipped config served nothing
        "quick_vs_full_rounds": (0, 1e3),
        "quick_drift": (0, 100),  # max/min - 1 of one point measured again
        "repeat_drift": (0, 100),
        "repeat_noise": (0, 100),
    },
}


def _consistent(report: dict[str, Any]) -> dict[str, Callable[[], bool]]:
    """Figures each script derives from others, to the precision it rounds them to."""
    return {
        "bert_onnx.py": lambda: len(report["sha256"]) == 64 and bool(report["inputs"]),
        "trt_check.py": lambda: (
            report["ran"] == (not report["missing"])
            and (report["measured"] is None) == (not report["ran"])
        ),
        "churn.py": lambda: (
            abs(report["vs_baseline_req_per_s"] - report["req_per_s"] / 10.7) <= 0.006
        ),
        "validate.py": lambda: math.isclose(
            report["models_per_s"], report["models"] / report["validate_s"], rel_tol=0.05
        ),
        "package.py": lambda: math.isclose(
            report["speedup"], report["baseline_s"] / report["ours_s"], rel_tol=0.05
        ),
        "invoke.py": lambda: (
            all(isinstance(v, bool) for v in report["targets_met"].values())
            and len(report["targets_met"]) == 5
            # each cost labelled by its model: the small sample's, and the encoder's
            and report["front_cost_model"].startswith("image_classifier-0:")
            and "BERT encoder L2 H128 A4" in report["bert_front_cost_model"]
            and len(report["front_cost_targets_met"]) == 5
        ),
        "gpu_check.py": lambda: True,
        "mme_k8s.py": lambda: (
            report["budget"] == 3
            and len(report["load_times"]) == report["loads"] > 0
            and report["cold_requests"] >= report["loads"]
            and Path(report["trace"]).read_text().count("\n") == 12 + 60
            and report["cold_over_own_load_p50"] <= report["cold_over_own_load_p99"]
            and report["headroom_models"] == 1  # a pod's front
            and report["headroom_max_models"] == 4
            and 1 <= report["headroom_p50"] <= report["headroom_max_seen"] <= 4
            # where cold requests' time went, phase by phase (the front's load phases)
            and {"wait", "slot", "download", "extract", "load", "infer", "outside"}
            <= set(report["cold_phases_p99_ms"])
            == set(report["cold_tail_phases_ms"])
        ),
        "local_down.py": lambda: (
            report["down_min_s"] <= report["down_median_s"] <= report["down_max_s"]
        ),
        "tune_netns.py": lambda: (
            len(report["loopback_rps"]) == len(report["namespace_rps"]) == 2
            and report["ratio_min"] <= report["ratio_median"] <= report["ratio_max"]
            and max(report["loopback_median_rps"], report["namespace_median_rps"]) > 0
        ),
        "tune.py": lambda: (
            report["full_best_rps"] == report["tuned_rps"]
            and max(report["default_rps"], report["tuned_rps"], report["quick_best_rps"]) > 0
        ),
    }


def out_of_bounds(script: str, report: dict[str, Any]) -> list[str]:
    """The figures of ``report`` outside BOUNDS[script] (or not finite numbers), and the
    derived figures that contradict their sources."""
    wrong = []
    for key, (least, most) in BOUNDS[script].items():
        values = report[key] if isinstance(report[key], list) else [report[key]]
        bad = [
            v
            for v in values
            if isinstance(v, bool) or not isinstance(v, int | float) or not least <= v <= most
        ]
        if bad or not values:
            wrong.append(f"{key}={report[key]!r} not within [{least}, {most}]")
    if not wrong and not _consistent(report)[script]():
        wrong.append("a derived figure contradicts its sources, or nothing was served")
    return wrong


#: the scripts that take tens of seconds: each runs in a test file of its own
LONG = {"tune.py": "test_smoke_tune.py", "gpu_check.py": "test_smoke_gpu_check.py",
        "invoke.py": "test_smoke_invoke.py", "local_down.py": "test_smoke_invoke.py",
        "mme_k8s.py": "test_smoke_mme_k8s.py"}  # fmt: skip


def run_script(script: str, tmp_path: Path) -> None:
    """Run ``bench/<script>`` in its small configuration and check what it reports."""
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
    assert out_of_bounds(script, report) == [], report
    if script == "gpu_check.py":  # every step passed, the config was restored, one summary file
        assert report["ok"] and set(report["steps"]) == {
            "generate", "package", "serve", "tune", "bench", "invoke",
        }  # fmt: skip
        assert report["invoke"]["model"] == "gpu_mlp-0"  # one answer decoded end to end
        assert report["tune"]["config_restored"] and report["bench"]["levels"]
        assert json.loads((tmp_path / "gpu-check.json").read_text()) == report
