"""Issue 18 item 10: hostile values end in a message naming the field, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

BENCH = {
    "target": "sagemaker",
    "instance_type": "ml.g4dn.xlarge",
    "gpu": None,
    "target_model": "m-0.tar.gz",
    "levels": [
        {"mode": "concurrency", "level": 1, "throughput_rps": 100, "p50_ms": 1, "p90_ms": 2,
         "p99_ms": 3, "errors": {}},
    ],
}  # fmt: skip


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "bench.json").write_text(json.dumps(BENCH))
    (tmp_path / "latin1.json").write_bytes(b'{"date": "caf\xe9"}')
    (tmp_path / "list.json").write_text(json.dumps({"date": "d", "sagemaker": [1]}))
    (tmp_path / "region.json").write_text(json.dumps({"date": "d", "ec2": {"us-east-1": 3}}))
    (tmp_path / "broken.json").write_text('{"date": ')
    (tmp_path / "a-file").write_text("mine\n")
    return tmp_path


PLAN = ["plan", "{d}/bench.json", "--latency-budget-ms", "10"]
ROWS: list[tuple[str, list[str], str]] = [
    # (id, arguments ({d} = the inputs folder), what the message must name)
    ("rps-1e308", [*PLAN, "--peak-rps", "1e308"], "--peak-rps"),
    ("rps-inf", [*PLAN, "--peak-rps", "inf"], "--peak-rps"),
    ("rps-huge-exponent", [*PLAN, "--peak-rps", "9e999999999"], "--peak-rps"),
    ("prices-not-utf8", [*PLAN, "--peak-rps", "5", "--prices", "{d}/latin1.json"], "latin1.json"),
    ("prices-section-list", [*PLAN, "--peak-rps", "5", "--prices", "{d}/list.json"], "sagemaker"),
    ("prices-region-number", [*PLAN, "--peak-rps", "5", "--prices", "{d}/region.json"], "ec2"),
    ("prices-malformed", [*PLAN, "--peak-rps", "5", "--prices", "{d}/broken.json"], "broken.json"),
    ("plot-unwritable", [*PLAN, "--peak-rps", "5", "--plot", "/proc/tdk/cost.png"], "--plot"),
    ("plot-under-a-file", [*PLAN, "--peak-rps", "5", "--plot", "{d}/a-file/c.png"], "--plot"),
    ("render-out-file", ["render", "k8s", "--stack", "gke-dev", "--out", "{d}/a-file",
                         "--project-dir", str(ROOT)], "--out"),
    ("cache-gb-nan", ["local", "up", "--release", "file://{d}", "--cache-gb", "nan"], "--cache-gb"),
    ("cache-gb-inf", ["local", "up", "--release", "file://{d}", "--cache-gb", "inf"], "--cache-gb"),
    ("eks-metrics-no-workspace", ["metrics", "--target", "eks", "--stack", "eks-dev",
                                  "--project-dir", str(ROOT)], "--workspace-id"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "field"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_hostile_value_is_a_message(inputs: Path, args: list[str], field: str) -> None:
    result = runner.invoke(app, [a.replace("{d}", str(inputs)) for a in args])
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), repr(result.exception)
    assert field in result.output, result.output


def test_million_row_trace_plots(inputs: Path) -> None:
    rows = "".join(f"{i},{i % 500}\n" for i in range(1_000_000))  # written here, not per row
    (inputs / "million.csv").write_text("time,rps\n" + rows)
    args = [*PLAN, "--traffic", "{d}/million.csv", "--plot", "{d}/cost.png", "--json"]
    result = runner.invoke(app, [a.replace("{d}", str(inputs)) for a in args])
    assert result.exit_code == 0, result.output
    assert (inputs / "cost.png").stat().st_size > 0


def test_endpoint_status_eks_needs_no_workspace(inputs: Path) -> None:
    """status reads Triton's readiness; it never asked for an AMP workspace it does not use."""
    args = ["endpoint", "status", "--target", "eks", "--stack", "eks-dev"]
    args += ["--project-dir", str(ROOT), "--url", "http://127.0.0.1:9", "--json"]
    result = runner.invoke(app, args)
    assert "--workspace-id" not in result.output
    assert "Traceback" not in result.output
    assert json.loads(result.stdout)["target"] == "eks"
