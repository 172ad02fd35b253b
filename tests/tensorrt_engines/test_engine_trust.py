"""Issue 47 item 5: the plan cache does not certify itself. A `model.plan` planted with a
`plan.json` that claims parity (anyone who writes `plans/` can, the serving identity among
them) was served by `tdk package --stack`; now a plan is served only when `tdk build` endorsed
its record (an HMAC with a key only its user holds), the record names the very entry and ONNX
model it lies under, and the plan beside it is the one it names."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.stores import open_store
from packager.stores.base import sha256_file
from packager.tensorrt.engines import ENGINE_FILE, RECORD_FILE, store_engine
from tests.tensorrt_engines.helpers import SEQ, fake_plan, model_dir, planned, record_for

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner(env={"COLUMNS": "200"})


def _package(repo: Path, release: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["package", str(repo), "--release", f"file://{release}",
                                 "--project-dir", str(ROOT), "--stack", "gke-dev"])  # fmt: skip
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, " ".join(result.output.split())


def _plant(release: Path, model: Path, plan: bytes) -> Path:
    """What a writer of plans/ does: a plan and a record claiming parity, no tdk build."""
    record = record_for(planned(model), plan)
    entry = release / record.key.prefix
    entry.mkdir(parents=True)
    (entry / ENGINE_FILE).write_bytes(plan)
    (entry / RECORD_FILE).write_text(record.to_json())
    return entry


def test_a_planted_plan_with_a_forged_record_is_refused(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    release = tmp_path / "release"
    entry = _plant(release, model, fake_plan())
    (entry / "plan.sig").write_text("0" * 64 + "\n")  # a guessed endorsement does not help
    code, output = _package(model.parent, release)
    assert code != 0, output
    assert "no valid endorsement" in output and "planted" in output and "tdk build" in output
    assert "served by its TensorRT engine" not in output
    assert not (release / "manifest.json").exists()


def test_an_endorsed_record_moved_under_another_model_is_refused(tmp_path: Path) -> None:
    """A writer of plans/ copies a genuine entry of model A under model B's ONNX sha256."""
    other = model_dir(tmp_path / "a")
    plan = fake_plan()
    release = tmp_path / "release"
    store_engine(open_store(f"file://{release}"), record_for(planned(other), plan), plan)
    model = model_dir(tmp_path / "b")
    (model / "1" / "model.onnx").write_bytes((model / "1" / "model.onnx").read_bytes() + b"\0")
    genuine = release / planned(other).key.prefix
    sha = sha256_file(model / "1" / "model.onnx")
    moved = release / genuine.relative_to(release).as_posix().replace(
        planned(other).key.onnx_sha256, sha
    )
    shutil.copytree(genuine, moved)
    code, output = _package(model.parent, release)
    assert code != 0 and "names another model or build" in output, output


def test_a_plan_swapped_under_an_endorsed_record_is_refused(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    release = tmp_path / "release"
    plan = fake_plan()
    store_engine(open_store(f"file://{release}"), record_for(planned(model), plan), plan)
    (release / planned(model).key.prefix / ENGINE_FILE).write_bytes(fake_plan())
    code, output = _package(model.parent, release)
    assert code != 0 and "names an engine other than" in output, output


def test_an_endorsed_plan_is_served_and_the_manifest_holds_the_bytes_read(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    release = tmp_path / "release"
    plan = fake_plan()
    store_engine(open_store(f"file://{release}"), record_for(planned(model), plan), plan)
    code, output = _package(model.parent, release)
    assert code == 0 and "served by its TensorRT engine" in output, output
    [entry] = json.loads((release / "manifest.json").read_text())["models"]
    assert entry["files"]["bert-0/1/model_cc8.9.plan"] == hashlib.sha256(plan).hexdigest()


def test_the_key_is_private_and_a_shared_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from packager.tensorrt.trust import KEY_ENV, load_key

    key = tmp_path / "plan.key"
    monkeypatch.setenv(KEY_ENV, str(key))
    made = load_key(create=True)
    assert made is not None and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert load_key() == made
    key.chmod(0o644)
    from tdk.errors import TdkError

    with pytest.raises(TdkError, match="readable or writable by others"):
        load_key()


FAKE_KUBECTL = """#!/bin/sh
case "$*" in
  *" apply -f "*|"apply -f "*) {python} {job} ;;
  *" get job "*) echo '{{"status": {{"conditions": [{{"type": "Complete", "status": "True"}}]}}}}'
    ;;
  *" logs "*) cat {log} ;;
esac
"""
# the Job: uploads a plan and its record to the store (the workload's identity), prints the
# record's sha256 in its own log; PLANT then overwrites the record as a serving pod could
FAKE_JOB = """import hashlib, json, sys
from pathlib import Path
entry, record, plan, log, plant = (Path(a) for a in sys.argv[1:6])
entry.mkdir(parents=True, exist_ok=True)
(entry / "model.plan").write_bytes(plan.read_bytes())
(entry / "plan.json").write_bytes(record.read_bytes())
digest = hashlib.sha256(record.read_bytes()).hexdigest()
log.write_text("building\\n" + json.dumps({{"passed": True, "plan_json_sha256": digest}}) + "\\n")
if plant.exists():
    (entry / "plan.json").write_bytes(plant.read_bytes())
"""


@pytest.mark.parametrize("planted", [False, True])
def test_the_stack_build_endorses_only_the_record_its_job_logged(
    planted: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    model = model_dir(tmp_path)
    build = planned(model)
    release = tmp_path / "release"
    plan = fake_plan()
    (tmp_path / "record.json").write_text(record_for(build, plan).to_json())
    (tmp_path / "plan.bin").write_bytes(plan)
    if planted:
        forged = json.loads(record_for(build, plan).to_json())
        forged["parity"]["max_abs"] = 0.0
        (tmp_path / "plant.json").write_text(json.dumps(forged))
    args = " ".join(str(p) for p in (release / build.key.prefix, tmp_path / "record.json",
                                     tmp_path / "plan.bin", tmp_path / "job.log",
                                     tmp_path / "plant.json"))  # fmt: skip
    (tmp_path / "job.py").write_text(FAKE_JOB.format())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(
        FAKE_KUBECTL.format(
            python=sys.executable, job=f"{tmp_path / 'job.py'} {args}", log=tmp_path / "job.log"
        )
    )
    (bin_dir / "kubectl").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    result = runner.invoke(app, [
        "build", str(model), "--stack", "gke-dev", "--project-dir", str(ROOT),
        "--store", f"file://{release}", *[a for s in SEQ for a in ("--shape", s)],
    ])  # fmt: skip
    if planted:
        assert result.exit_code != 0 and "not the record the build Job" in result.output
        assert not (release / build.key.prefix / "plan.sig").exists()
    else:
        assert result.exit_code == 0, result.output
        assert (release / build.key.prefix / "plan.sig").is_file()
    code, output = _package(model.parent, release)
    assert (code == 0) is not planted, output
