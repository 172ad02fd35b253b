"""``tdk tune`` end to end on the real local Triton, with measurement times cut to fractions of
a second: the tuned config lands where asked and validates; Ctrl-C stops every Triton."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.perf.bench.placement import resolve
from infra.triton_runtime.runtime import RuntimeMissing, find_runtime
from tests.local.local_helpers import reaped

runner = CliRunner()
pytestmark = pytest.mark.e2e
FAST = ["--latency-budget-ms", "2000", "--duration", "0.2", "--max-batch-sizes", "8"]
FAST += ["--accelerators", "none", "--max-windows", "1", "--processes", "1"]  # one window each
FAST += ["--repeats", "1"]  # the shipped best measured once more (its drift)


@pytest.fixture(autouse=True)
def _runtime() -> None:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))


@pytest.fixture
def model(sample_repo: Path, tmp_path: Path) -> Path:
    """The sample image model shipped with a 50 ms queue delay: any candidate without it beats
    the shipped config, so a tuned config is written (a worse one never is)."""
    path = Path(shutil.copytree(sample_repo / "image_classifier", tmp_path / "image_classifier"))
    config = path / "config.pbtxt"
    text = config.read_text()
    assert "max_queue_delay_microseconds: 100\n" in text
    config.write_text(
        text.replace("max_queue_delay_microseconds: 100\n", "max_queue_delay_microseconds: 50000\n")
    )
    return path


def test_full_search_writes_a_valid_tuned_model(model: Path, tmp_path: Path) -> None:
    out, plot = tmp_path / "tuned", tmp_path / "tune.png"
    args = [str(model), *FAST, "-c", "1,2", "--instances", "1,2", "--queue-delays-us", "0"]
    args += ["--search", "full", "--out", str(out), "--plot", str(plot), "--json"]
    result = runner.invoke(app, ["tune", *args])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    where = resolve("auto", "auto", local=True)  # pinned apart by default: said and reported
    assert where.label() in " ".join(result.stderr.split())  # the plan line, wrapped or not
    assert (report["server_cpus"], report["client_cpus"]) == tuple(where.to_dict().values())
    # grid: 2 instance counts x (no dynamic batching, dynamic, dynamic + preferred) = 6
    assert report["configs_measured"] == 6
    assert report["measurements"] == 6 * 2 == len(report["points"])
    assert len(report["shipped_points"]) == 2 and report["shipped_best"] is not None
    assert len(report["repeats_rps"]) == 2 and report["drift"] >= 0  # --repeats 1, and the end
    choice = report["choice"]
    assert choice is not None and choice["p99_ms"] <= 2000 and choice["errors"] == 0
    assert max(p["throughput_rps"] for p in report["points"]) == choice["throughput_rps"]
    front = [(p["p99_ms"], p["throughput_rps"]) for p in report["pareto_front"]]
    assert front == sorted(front) and choice["throughput_rps"] == front[-1][1]
    tuned = out / "image_classifier" / "config.pbtxt"
    assert f"+++ {tuned}" in report["diff"]
    assert f"count: {choice['config']['instances']}" in tuned.read_text()
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_in_place_shows_the_diff(model: Path) -> None:
    before = (model / "config.pbtxt").read_text()
    onnx = (model / "1" / "model.onnx").read_bytes()
    args = [str(model), *FAST, "-c", "1", "--instances", "1,2", "--queue-delays-us", "0"]
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["tune", *args, "--write"])
    assert result.exit_code == 0, result.output
    # one truth (issue 49 item 6): the title counts the rows' measurements, the chosen row
    # carries the figures "best:" states
    counted = re.search(r"Pareto front of (\d+) measurements", result.stdout)
    assert counted is not None and int(counted.group(1)) >= 2, result.stdout
    best = re.search(r"best: .* at concurrency \d+: ([\d.]+) rps", result.stdout)
    lines = result.stdout.splitlines()
    [chosen] = [line for line in lines if "chosen" in line and not line.startswith("note:")]
    assert best is not None and f" {best.group(1)} " in chosen, result.stdout
    # chosen on this CPU-only machine, standing in for the GPU the model would serve on
    [cpu] = [line for line in lines if line.startswith("note: chosen on CPU")]
    assert "re-tune on the serving GPU with tdk tune --url" in cpu, result.stdout
    after = (model / "config.pbtxt").read_text()
    assert "--- " in result.stdout and "+++ " in result.stdout
    # a quick search says it measures only what it visits, not "n/126 configs"
    assert "quick: a hill climb from the shipped config" in result.stderr
    assert "configs measured (hill climb over a 6-config grid)" in result.stderr, result.stderr
    assert "instance_group" in after and "instance_group" not in before
    assert (model / "1" / "model.onnx").read_bytes() == onnx
    assert sorted(p.name for p in model.iterdir()) == ["1", "config.pbtxt"]  # no staging left


def test_out_without_write_leaves_the_source_untouched(model: Path, tmp_path: Path) -> None:
    before = (model / "config.pbtxt").read_text()
    args = [str(model), *FAST, "-c", "1", "--instances", "1", "--queue-delays-us", "0"]
    result = runner.invoke(app, ["tune", *args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert (model / "config.pbtxt").read_text() == before
    again = runner.invoke(app, ["tune", *args, "--out", str(tmp_path / "o")])
    assert again.exit_code == 2 and "already exists" in again.output


def test_usage_errors(tmp_path: Path, model: Path) -> None:
    missing = runner.invoke(app, ["tune", str(tmp_path), "--latency-budget-ms", "5"])
    assert missing.exit_code == 2 and "no config.pbtxt" in missing.output
    both = runner.invoke(
        app, ["tune", str(model), "--latency-budget-ms", "5", "--write", "--out", "x"]
    )
    assert both.exit_code == 2 and "--write and --out" in both.output
    bad = runner.invoke(app, ["tune", str(model), "--latency-budget-ms", "5", "--instances", "0"])
    assert bad.exit_code == 2 and "--instances '0'" in bad.output


def _children(pid: int, name: str) -> list[int]:
    """The processes called ``name`` among ``pid``'s descendants (Triton runs under its
    launcher, ``infra/triton_runtime/netns.py``)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        names[int(entry.name)] = stat[stat.index("(") + 1 : stat.rindex(")")]
        parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])

    def descends(child: int) -> bool:
        while child in parents and child != pid:
            child = parents[child]
        return child == pid

    return [p for p, comm in names.items() if comm == name and p != pid and descends(p)]


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_ctrl_c_reports_the_best_so_far_and_stops_triton(model: Path) -> None:
    tdk = Path(sys.executable).with_name("tdk")
    args = [str(tdk), "tune", str(model), "--latency-budget-ms", "2000", "--duration", "0.3"]
    args += ["-c", "1,2,4", "--search", "full", "--max-windows", "3", "--repeats", "1"]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),  # SIGINT: the terminal's default (tests/conftest.py)
    )
    progress = threading.Event()
    err_lines: list[str] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line)
            if line.startswith("tune: 1/"):
                progress.set()

    out_chunks: list[str] = []

    def read_stdout() -> None:
        assert proc.stdout is not None
        out_chunks.append(proc.stdout.read())

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    out_reader = threading.Thread(target=read_stdout, daemon=True)
    out_reader.start()
    with reaped(proc):
        assert progress.wait(180), "".join(err_lines)
        tritons = _children(proc.pid, "tritonserver")
        assert len(tritons) == 1
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    reader.join(10)
    out_reader.join(10)
    out = "".join(out_chunks)
    assert proc.returncode == 130, (out, err_lines)
    assert "best: " in out and "rps" in out
    assert any("interrupted" in line for line in err_lines)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in tritons) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in tritons)


def test_an_impossible_budget_fails_and_writes_nothing(model: Path, tmp_path: Path) -> None:
    args = [str(model), "--latency-budget-ms", "0.001", "--duration", "0.1", "-c", "1"]
    args += ["--instances", "1", "--max-batch-sizes", "8", "--queue-delays-us", "0"]
    args += ["--accelerators", "none", "--max-windows", "1", "--processes", "1"]
    result = runner.invoke(app, ["tune", *args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output
    assert "no configuration met p99 <= 0.001 ms" in result.output
    assert not (tmp_path / "o").exists()
