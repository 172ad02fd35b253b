"""``tdk bench --json`` against a real Triton records what it ran on, and ``tdk plan`` sizes a
fleet from that record (the flow of docs/inferentia.md, on 127.0.0.1)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

runner = CliRunner()
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def triton(sample_repo: Path) -> Iterator[tuple[str, Path]]:
    """A release of image_classifier and a Triton serving its repository/ tree (as on k8s)."""
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    from infra.perf.tune.server import LocalTriton

    with tempfile.TemporaryDirectory() as work:
        store = Path(work) / "store"
        published = runner.invoke(
            app, ["package", str(sample_repo / "image_classifier"), "--release", f"file://{store}"]
        )
        assert published.exit_code == 0, published.output
        model = store / "repository" / "image_classifier-0"
        # its listeners on this machine's loopback: tdk bench --url calls it as a remote Triton
        with LocalTriton(model, Path(work) / "t", netns="off") as server:
            server.load(server.base_config)
            yield server.url, store


def test_bench_records_the_unit_and_plan_reads_it(triton: tuple[str, Path], tmp_path: Path) -> None:
    url, store = triton
    args = ["bench", "--target", "eks", "--url", url, "--release", f"file://{store}"]
    args += ["--target-model", "image_classifier-0.tar.gz", "-c", "1,4", "--duration", "0.3"]
    result = runner.invoke(app, [*args, "--instance-type", "g5.xlarge", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["target"] == "eks" and record["instance_type"] == "g5.xlarge"
    assert record["target_model"] == "image_classifier-0.tar.gz"
    assert record["concurrency"] == [1, 4]
    levels = record["levels"]
    assert [level["level"] for level in levels] == [1, 4]
    # four threads on one HTTP connection would corrupt requests: each thread has its own
    assert all(level["ok"] > 0 and not level["errors"] for level in levels)
    for level in levels:
        assert level["p50_ms"] <= level["p90_ms"] <= level["p99_ms"]

    measurement = tmp_path / "bench.json"
    measurement.write_text(result.stdout)
    best = max(levels, key=lambda level: level["throughput_rps"])
    plan = runner.invoke(
        app,
        [
            "plan", str(measurement), "--target", "eks", "--latency-budget-ms", "10000",
            "--peak-rps", "5000", "--baseline", "inf2.xlarge:2756rps:0.76", "--json",
        ],
    )  # fmt: skip
    assert plan.exit_code == 0, plan.output
    document = json.loads(plan.stdout)
    assert document["measured_unit_rps"] == str(best["throughput_rps"])
    names = [option["name"] for option in document["options"]]
    assert names[0] == "g5.xlarge"  # the measured type comes first, then the EKS defaults
    assert document["options"][0]["unit_rps_measured"] is True
    assert names[-1] == "inf2.xlarge (baseline)"
