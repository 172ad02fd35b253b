"""Running the build: the kubectl command lines, waiting on the Job (complete, failed with its
build log, past the deadline), and pod_build.py's own pipeline with stand-in trtexec and
nvidia-smi programs (the comparison, the record, the refusal of a plan outside tolerance)."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import numpy as np
import pytest

from infra.tensorrt_engines import run
from infra.tensorrt_engines.pod_build import main as pod_main
from infra.tensorrt_engines.stage import stage
from packager.tensorrt.engines import EngineRecord
from tdk.errors import TdkError
from tests.tensorrt_engines.helpers import model_dir, planned

JOB = run.JobRef("triton", "tdk-build-1234abcd-5678ef90")


def test_kubectl_command_lines() -> None:
    assert run.apply_argv("kubectl", Path("/tmp/job.yaml")) == [
        "kubectl", "apply", "-f", "/tmp/job.yaml",
    ]  # fmt: skip
    assert run.status_argv("kubectl", JOB) == [
        "kubectl", "-n", "triton", "get", "job", JOB.name, "-o", "json",
    ]  # fmt: skip
    assert run.logs_argv("kubectl", JOB)[-3:] == ["-c", "build", "--tail=40"]


def _status(kind: str) -> str:
    conditions = [] if kind == "Running" else [{"type": kind, "status": "True"}]
    return json.dumps({"status": {"conditions": conditions}})


class FakeCluster:
    """kubectl's answers in order, and a clock that each poll advances."""

    def __init__(self, states: list[str]) -> None:
        self.states = states
        self.calls: list[list[str]] = []
        self.now = 0.0

    def run(self, argv: list[str]) -> str:
        self.calls.append(argv)
        if "logs" in argv:
            return "parity failed: max abs 0.31, max rel 2.4\n"
        return _status(self.states.pop(0) if len(self.states) > 1 else self.states[0])

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _await(cluster: FakeCluster, deadline: float = 600) -> None:
    run.await_job("kubectl", JOB, deadline, cluster.run, lambda: cluster.now, cluster.sleep)


def test_waiting_ends_when_the_job_completes() -> None:
    cluster = FakeCluster(["Running", "Running", "Complete"])
    _await(cluster)
    assert len(cluster.calls) == 3 and cluster.now == 2 * run.POLL_SECONDS


def test_a_failed_job_is_an_error_carrying_its_build_log() -> None:
    cluster = FakeCluster(["Running", "Failed"])
    with pytest.raises(TdkError) as caught:
        _await(cluster)
    assert "parity failed: max abs 0.31" in caught.value.message
    assert "describe job" in (caught.value.hint or "")


def test_a_job_past_its_deadline_is_an_error_naming_how_to_look() -> None:
    cluster = FakeCluster(["Running"])
    with pytest.raises(TdkError, match="did not finish in 30 s"):
        _await(cluster, deadline=30)
    assert cluster.now >= 30


FAKE_TRTEXEC = """#!{python}
import json, sys
import numpy as np
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
print("[I] TensorRT version: 10.16.1")
if "--saveEngine" in args:
    open(args["--saveEngine"], "wb").write(b"engine")
else:
    ref = np.load("reference.npz")
    out = [dict(name=n, dimensions="x".join(map(str, ref[n].shape)),
                values=(ref[n] + {offset}).ravel().tolist()) for n in ref.files]
    json.dump(out, open(args["--exportOutput"], "w"))
"""


def _tools(tmp_path: Path, offset: float, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "trtexec": FAKE_TRTEXEC.format(python=sys.executable, offset=offset),
        "nvidia-smi": "#!/bin/sh\necho 8.9\n",
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")


def test_pod_build_records_a_plan_within_tolerance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    build = planned(model_dir(tmp_path))
    stage(build, work)
    _tools(tmp_path, 1e-5, monkeypatch)
    assert pod_main([str(work)]) == 0
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    digest = hashlib.sha256((work / "plan.json").read_bytes()).hexdigest()
    assert printed["plan_json_sha256"] == digest  # what tdk build endorses (issue 47 item 5)
    record = EngineRecord.from_json((work / "plan.json").read_text(), "plan.json")
    assert record.key == build.key and record.built_for == "8.9:10.16@26.04"
    assert record.parity.passed and 0 < record.parity.max_abs < 1e-4
    assert (work / "model.plan.sha256").read_text().strip() == record.plan_sha256


def test_pod_build_refuses_a_plan_outside_tolerance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    stage(planned(model_dir(tmp_path)), work)
    _tools(tmp_path, 0.5, monkeypatch)
    assert pod_main([str(work)]) == 1
    assert not (work / "plan.json").exists()  # the upload step has nothing to upload


def test_pod_build_refuses_another_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.tensorrt_engines.stage import BuildTarget

    work = tmp_path / "work"
    a10g = BuildTarget("g5.xlarge", "A10G", (8, 6), "26.05", None)
    stage(planned(model_dir(tmp_path), a10g), work)
    _tools(tmp_path, 0.0, monkeypatch)
    with pytest.raises(SystemExit, match=r"8\.9; the engine is for 8\.6"):
        pod_main([str(work)])
    assert np.load(work / "reference.npz")["logits"].shape == (32, 2)


def test_local_builds_caches_and_then_builds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--local` with trtexec and a GPU here (stand-ins): built, checked, cached; again: hit."""
    from typer.testing import CliRunner

    from cli.main import app
    from tests.tensorrt_engines.helpers import SEQ

    _tools(tmp_path, 1e-5, monkeypatch)
    root = Path(__file__).resolve().parents[2]
    args = ["build", str(model_dir(tmp_path)), "--stack", "gke-dev", "--project-dir", str(root),
            "--local", "--store", f"file://{tmp_path / 'release'}", "--json",
            *[a for s in SEQ for a in ("--shape", s)]]  # fmt: skip
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    # built here, not in the 26.05 TensorRT container: the record does not claim the release
    assert report["built"] is True and report["built_for"] == "8.9:10.16"
    second = json.loads(CliRunner().invoke(app, args).output)
    assert second["built"] is False and second["entry"] == report["entry"]


FAKE_KUBECTL = """#!/bin/sh
printf "%s\\n" "$*" >> {log}
case "$*" in
  *" apply -f "*|"apply -f "*) cp "$3" {log}.job.yaml; echo applied ;;
  *" get job "*) echo '{{"status": {{"conditions": [{{"type": "Complete", "status": "True"}}]}}}}'
    ;;
esac
"""


def test_the_stack_build_uploads_inputs_applies_the_job_and_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubectl stand-in: the Job is applied and reported complete, but (no cluster) nothing
    uploads a plan, so the command says the entry holds none and exits non-zero."""
    from typer.testing import CliRunner

    from cli.main import app
    from tests.tensorrt_engines.helpers import SEQ

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "kubectl.log"
    (bin_dir / "kubectl").write_text(FAKE_KUBECTL.format(log=log))
    (bin_dir / "kubectl").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    release = tmp_path / "release"
    root = Path(__file__).resolve().parents[2]
    result = CliRunner().invoke(app, [
        "build", str(model_dir(tmp_path)), "--stack", "gke-dev", "--project-dir", str(root),
        "--store", f"file://{release}", *[a for s in SEQ for a in ("--shape", s)],
    ])  # fmt: skip
    assert result.exit_code == 1 and "holds no engine" in result.output, result.output
    calls = log.read_text().splitlines()
    assert calls[0].startswith("apply -f ") and calls[1].startswith("-n triton get job tdk-build-")
    job = (tmp_path / "kubectl.log.job.yaml").read_text()
    assert "nvcr.io/nvidia/tensorrt:26.04-py3" in job
    staged = sorted(p.name for p in release.rglob("input/*") if p.is_file())
    assert staged == ["build.json", "model.onnx", "pod_build.py", "reference.npz"]
