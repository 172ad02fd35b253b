"""Issue 36 item 5: every number a user gives (an option, an environment variable, a field of a
file tdk reads) is finite, in range and written in ASCII digits (``tdk.numbers``). ``nan``
compares false with every bound, ``1e-300`` overflows what divides by it, ``0_1`` and an
Arabic-Indic one are 1 to Python's own parsers. One row per value: a message naming the
option, variable or field, never a traceback and never a wrong result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner(env={"COLUMNS": "300"})
ROOT = Path(__file__).resolve().parents[2]
MODEL = "{m}"  # the sample tokenizer model, generated per session (a clean clone has none)
BENCH = ["bench", "--target-model", "m-0.tar.gz", "--url", "http://127.0.0.1:9"]
TUNE = ["tune", MODEL, "--latency-budget-ms", "50"]
ARABIC_ONE = "\u0661"


@dataclass(frozen=True)
class Row:
    args: list[str]
    names: str  # what the message must name
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # written into the test's folder


def _token_bench(rate: object) -> str:
    # a streamed (bench --prompt) measurement runs where decoupled models do: eks, not MME
    return json.dumps({
        "target": "eks", "instance_type": "g5.xlarge", "gpu": None, "model": "llm",
        "mode": "concurrency", "level": 1, "errors": 0, "output_tokens_per_s": rate,
    })  # fmt: skip


REQUEST_BENCH = {
    "target": "sagemaker", "instance_type": "ml.g4dn.xlarge", "gpu": None,
    "target_model": "m-0.tar.gz",
    "levels": [{"mode": "concurrency", "level": 1, "throughput_rps": 100, "p50_ms": 1,
                "p90_ms": 2, "p99_ms": 3, "errors": {}}],
}  # fmt: skip


def _lock(**fields: object) -> str:
    record = {
        "tdk_lock": 1, "owner": "x", "host": "h", "pid": 1, "created": 0.0,
        "expires": 4e9, "nonce": "n",
    }  # fmt: skip
    return json.dumps({**record, **fields})


ROWS = {
    "bench-rate-nan": Row([*BENCH, "--rate", "nan", "--json"], "--rate"),
    "bench-rate-tiny": Row([*BENCH, "--rate", "1e-300"], "--rate"),
    "bench-rate-inf": Row([*BENCH, "--rate", "inf"], "--rate"),
    "bench-duration-nan": Row([*BENCH, "--duration", "nan"], "--duration"),
    "bench-stability-nan": Row([*BENCH, "--stability", "nan"], "--stability"),
    "bench-max-windows-0": Row([*BENCH, "--max-windows", "0"], "--max-windows"),
    "bench-max-windows-arabic": Row([*BENCH, "--max-windows", ARABIC_ONE], "--max-windows"),
    "bench-timeout-nan": Row([*BENCH, "--timeout", "nan"], "--timeout"),
    "tune-duration-nan": Row([*TUNE, "--duration", "nan"], "--duration"),
    "tune-max-windows-0": Row([*TUNE, "--max-windows", "0"], "--max-windows"),
    "tune-processes-underscore": Row([*TUNE, "--processes", "0_1"], "--processes"),
    "tune-budget-nan": Row(["tune", MODEL, "--latency-budget-ms", "nan"], "--latency-budget-ms"),
    "tune-server-cpus-underscore": Row([*TUNE, "--server-cpus", "0_1"], "--server-cpus"),
    "tune-server-cpus-arabic": Row([*TUNE, "--server-cpus", ARABIC_ONE], "--server-cpus"),
    "s3-read-timeout-nan": Row(
        ["package", MODEL, "--release", "s3://bucket/r"],
        "TDK_S3_READ_TIMEOUT",
        env={"TDK_S3_READ_TIMEOUT": "nan", "TDK_S3_ENDPOINT_URL": "http://127.0.0.1:9"},
    ),
    "s3-attempts-arabic": Row(
        ["package", MODEL, "--release", "s3://bucket/r"],
        "TDK_S3_MAX_ATTEMPTS",
        env={"TDK_S3_MAX_ATTEMPTS": ARABIC_ONE, "TDK_S3_ENDPOINT_URL": "http://127.0.0.1:9"},
    ),
    "tdk-today-last-day": Row(
        ["doctor", "--stack", "eks-dev", "--project-dir", str(ROOT)],
        "TDK_TODAY",
        env={"TDK_TODAY": "9999-12-31"},
    ),
    "plan-token-rate-tiny": Row(
        ["plan", "{d}/gen.json", "--peak-rps", "5"],
        "output_tokens_per_s",
        files={"gen.json": _token_bench(1e-308)},
    ),
    "plan-baseline-tiny": Row(
        ["plan", "{d}/gen.json", "--baseline", "inf2.xlarge:1e-300tok/s:0.76"],
        "--baseline",
        files={"gen.json": _token_bench(300)},
    ),
    "plan-baseline-arabic": Row(
        [
            "plan",
            "{d}/gen.json",
            "--baseline",
            f"inf2.xlarge:{ARABIC_ONE}00tok/s:0.76",
        ],
        "--baseline",
        files={"gen.json": _token_bench(300)},
    ),
    "plan-peak-rps-arabic": Row(
        ["plan", "{d}/bench.json", "--slo-ms", "10", "--peak-rps", ARABIC_ONE],
        "--peak-rps",
        files={"bench.json": json.dumps(REQUEST_BENCH)},
    ),
    "plan-slo-huge": Row(
        ["plan", "{d}/bench.json", "--slo-ms", "1e300", "--peak-rps", "5"],
        "--slo-ms",
        files={"bench.json": json.dumps(REQUEST_BENCH)},
    ),
    "plan-throughput-text-arabic": Row(
        ["plan", "{d}/bench.json", "--slo-ms", "10", "--peak-rps", "5"],
        "throughput_rps",
        files={"bench.json": json.dumps(REQUEST_BENCH).replace("100", f'"{ARABIC_ONE}00"')},
    ),
    "lock-expires-1e20": Row(
        ["package", MODEL, "--release", "{d}/dest"],
        "not a tdk publish lock",
        files={"dest/tdk-publish.lock": _lock(expires=1e20)},
    ),
    "lock-expires-nan": Row(
        ["package", MODEL, "--release", "{d}/dest"],
        "not a tdk publish lock",
        files={"dest/tdk-publish.lock": _lock(expires="nan")},
    ),
    "lock-pid-2-70": Row(
        ["package", MODEL, "--release", "{d}/dest"],
        "not a tdk publish lock",
        files={"dest/tdk-publish.lock": _lock(pid=2**70)},
    ),
    # a timeout of inf turned the local endpoint's slow-client deadline off
    "local-body-timeout-inf": Row(
        ["local", "up", "--release", "{d}/store", "--body-timeout", "inf"], "--body-timeout inf"
    ),
    "local-body-timeout-huge": Row(
        ["local", "up", "--release", "{d}/store", "--body-timeout", "1e300"], "at most 86400"
    ),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_hostile_number_is_refused_naming_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_repo: Path
) -> None:
    row = ROWS[name]
    for key, value in row.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    for rel, text in row.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    model = str(sample_repo / "tokenizer")
    args = [arg.replace("{d}", str(tmp_path)).replace("{m}", model) for arg in row.args]
    result = runner.invoke(app, args)
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    flat = " ".join(result.output.replace("│", " ").split())
    assert row.names in flat and "hint:" in flat, result.output
    assert "NaN" not in result.stdout  # --json never carries what JSON cannot say
    if name.startswith("s3-"):
        assert "credentials" not in flat  # the value is blamed, not the credentials


@pytest.mark.parametrize(
    "args",
    [["--duration", "nan"], ["--duration", "1e-300"], ["--max-windows", "0"],
     ["--rounds", ARABIC_ONE], ["--stability", "inf"], ["--budget-ms", "nan"]],
    ids=["duration-nan", "duration-tiny", "max-windows-0", "rounds-arabic", "stability-inf",
         "budget-nan"],
)  # fmt: skip
def test_bench_tune_script_refuses_a_hostile_number_before_starting(args: list[str]) -> None:
    """bench/tune.py starts Triton and a tune: a bad value stops it at parse time (exit 2)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "tune.py"), *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"argument {args[0]}" in done.stderr and "Traceback" not in done.stderr
