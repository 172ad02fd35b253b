"""``tdk tune`` under careless input and signals, from the outside: refusals come before any
measurement and write nothing; SIGTERM stops Triton, its Python stubs, its shared memory and
its temp dir as Ctrl-C does; ``--write`` keeps the user's comments; a worse config never lands."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.perf.tune.search import Point, Search, Settings
from infra.perf.tune.space import Knobs
from infra.perf.tune.tuner import SearchMode, TuneReport
from infra.triton_runtime.runtime import SHM_DIR, RuntimeMissing, find_runtime
from tests.local.local_helpers import alive, children, reaped

runner = CliRunner()
TDK = str(Path(sys.executable).with_name("tdk"))
FAST = ["--latency-budget-ms", "2000", "--duration", "0.2", "--accelerators", "none"]
FAST += ["--max-windows", "1"]  # one window per point; generator processes as by default
COMMENTED = """# Image model: tuned by hand, keep these notes
name: "image_classifier"
max_batch_size: 16  # the ONNX graph allows any batch
input {
  name: "input"  # NCHW
  data_type: TYPE_FP32
  dims: [ 3, 224, 224 ]
}
output {
  name: "logits"
  data_type: TYPE_FP32
  dims: 11
}
# a long queue delay: every request waits 50 ms at concurrency 1
dynamic_batching {
  max_queue_delay_microseconds: 50000
}
backend: "onnxruntime"
"""


@pytest.fixture
def model(sample_repo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample_repo / "image_classifier", tmp_path / "image_classifier"))


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_out_inside_the_model_is_refused_at_once_writing_nothing(model: Path) -> None:
    before = _tree(model)
    started = time.monotonic()
    result = subprocess.run(
        [TDK, "tune", str(model), *FAST, "--out", str(model / "tuned")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 20
    assert result.returncode == 2, result.stderr
    assert "inside the model" in result.stderr and "Traceback" not in result.stderr
    assert _tree(model) == before


@pytest.mark.parametrize("case", ["model-in-out", "out-is-file-child", "symlink-escape", "exists"])
def test_bad_outputs_and_inputs_are_refused_before_measuring(
    model: Path, tmp_path: Path, case: str
) -> None:
    out = tmp_path / "o"
    expect = ""
    if case == "model-in-out":
        out, expect = tmp_path, "holds the model"
    elif case == "out-is-file-child":
        (tmp_path / "file").write_text("x")
        out, expect = tmp_path / "file" / "o", "is not a directory"
    elif case == "symlink-escape":
        (model / "1" / "secret").symlink_to("/etc/passwd")
        expect = "link"
    else:
        (out / model.name).mkdir(parents=True)
        expect = "already exists"
    before = _tree(tmp_path)
    result = runner.invoke(app, ["tune", str(model), *FAST, "--out", str(out)])
    assert result.exit_code != 0 and expect in result.output, result.output
    assert "rps" not in result.output  # nothing was measured
    assert _tree(tmp_path) == before


def test_a_model_that_does_not_validate_is_refused_first(model: Path) -> None:
    (model / "config.pbtxt").write_text(COMMENTED.replace('"image_classifier"', '"other"'))
    result = runner.invoke(app, ["tune", str(model), *FAST])
    assert result.exit_code == 1 and "nothing was measured" in result.output, result.output


def _shm(prefix: str) -> list[str]:
    return sorted(p.name for p in SHM_DIR.glob(f"{prefix}*"))


def _shm_of(prefix: str, family: Iterable[int]) -> list[str]:
    """The regions in this machine's /dev/shm and in the private /dev/shm that Triton's mount
    namespace has where the kernel allows one (issue 47 item 3), seen through /proc/PID/root."""
    found = set(_shm(prefix))
    for pid in family:
        try:
            found |= {p.name for p in Path(f"/proc/{pid}/root/dev/shm").glob(f"{prefix}*")}
        except OSError:  # the process ended meanwhile
            continue
    return sorted(found)


@pytest.mark.e2e
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_termination_signal_cleans_up_like_ctrl_c(
    model: Path, tmp_path: Path, signum: int
) -> None:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    args = [TDK, "tune", str(model), *FAST, "-c", "1,2,4", "--search", "full"]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    progress = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("tune: 1/"):
                progress.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    with reaped(proc):
        assert progress.wait(180), "tune made no progress"
        family = children(proc.pid)
        prefix = f"tdk{proc.pid}_"
        assert len(family) >= 2 and _shm_of(prefix, family)  # Triton, its Python stub, their shm
        assert any(p.name.startswith("tdk-tune-") for p in tmp.iterdir())
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum
    assert "best: " in out
    assert not [pid for pid in family if alive(pid)]
    assert _shm(prefix) == []
    # tritonserver itself keeps a one-line ".ses" file in TMPDIR (also in /tmp): not ours
    assert [p.name for p in tmp.iterdir() if p.name != ".ses"] == []


@pytest.mark.e2e
def test_write_keeps_comments_and_changes_only_tuned_fields(model: Path) -> None:
    (model / "config.pbtxt").write_text(COMMENTED)
    # the shipped 50 ms queue delay is beaten by any config without it
    args = [str(model), *FAST, "-c", "1", "--instances", "1", "--max-batch-sizes", "16"]
    args += ["--repeats", "0", "--pairs", "0"]  # a 50 ms delay loses by far: no noise to settle
    result = runner.invoke(app, ["tune", *args, "--queue-delays-us", "0", "--write", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["improves"] is True
    after = (model / "config.pbtxt").read_text()
    kept = [line for line in COMMENTED.splitlines() if "#" in line or "dims: [" in line]
    assert kept and all(line in after.splitlines() for line in kept)
    assert "max_queue_delay_microseconds: 50000" not in after
    assert after.splitlines()[:13] == COMMENTED.splitlines()[:13]


def _point(knobs: Knobs, rps: float) -> Point:
    return Point(knobs, 4, rps, 1.0, 1.0, 2.0, 0)


def test_the_shipped_config_stays_unless_beaten() -> None:
    shipped = Knobs(1, 16, True, 100, ())
    report = TuneReport("m", SearchMode.quick, Settings(50), shipped, Search(Settings(50)))
    report.shipped_best = _point(shipped, 100.0)
    report.search.points = [_point(Knobs(2, 8, False), 82.0), _point(Knobs(1, 8, False), 101.0)]
    assert report.choice == report.shipped_best and not report.improves
    report.search.points.append(_point(Knobs(4, 32, True, 500, (32,)), 150.0))
    assert report.choice is not None and report.choice.throughput_rps == 150.0
    assert report.improves and report.to_dict()["speedup"] == 1.5
