"""The local endpoint's state file against reuse and planting (issue 25 item 6): `tdk local down`
signals only the process that wrote the state file, never another one that now has its pid."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.local.serve import process_identity

runner = CliRunner()


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("TDK_STATE_DIR", str(folder))
    return folder


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process of ours, standing where a reused pid would point."""
    proc = subprocess.Popen(["sleep", "60"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _plant(state_dir: Path, pid: int, **extra: str) -> Path:
    work = state_dir / "local-old"
    work.mkdir()
    state = {
        "name": "old",
        "pid": pid,
        "port": 1,
        "url": "http://127.0.0.1:1",
        "store": "file:///nowhere",
        "workdir": str(work),
        "log": "",
        **extra,
    }
    path = state_dir / "local-old.json"
    path.write_text(json.dumps(state))
    return path


@pytest.mark.parametrize(
    "identity",
    [
        pytest.param("stale", id="pid-reused-since"),
        pytest.param(None, id="older-state-file-without-identity"),
    ],
)
def test_down_never_kills_a_process_that_reused_the_pid(
    state_dir: Path, bystander: subprocess.Popen[bytes], identity: str | None
) -> None:
    extra = {} if identity is None else {"identity": f"{process_identity(os.getpid())}0"}
    path = _plant(state_dir, bystander.pid, **extra)
    result = runner.invoke(app, ["local", "down", "--endpoint", "old"])
    assert result.exit_code == 0, result.output  # idempotent down: nothing of ours to stop
    assert "no local endpoint named old is running" in result.output
    assert bystander.poll() is None  # still running
    assert not path.exists()  # the stale state file is gone


def test_down_signals_the_process_the_state_file_identifies(
    state_dir: Path, bystander: subprocess.Popen[bytes]
) -> None:
    """The identity check is what decides: with the bystander's own identity it is stopped."""
    _plant(state_dir, bystander.pid, identity=process_identity(bystander.pid))
    result = runner.invoke(app, ["local", "down", "--endpoint", "old", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"name": "old", "stopped": bystander.pid}
    assert bystander.wait(10) == -15  # SIGTERM


def test_down_ignores_a_state_file_another_user_planted(
    state_dir: Path, bystander: subprocess.Popen[bytes]
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    path = _plant(state_dir, bystander.pid, identity=process_identity(bystander.pid))
    os.chown(path, 65534, 65534)
    result = runner.invoke(app, ["local", "down", "--endpoint", "old"])
    assert result.exit_code == 0, result.output  # not ours: nothing to stop
    assert "nothing to stop" in result.output
    assert bystander.poll() is None


def test_down_removes_what_a_cut_off_download_left(
    state_dir: Path, bystander: subprocess.Popen[bytes]
) -> None:
    _plant(state_dir, bystander.pid, identity=process_identity(bystander.pid))
    work = state_dir / "local-old"
    (work / ".tdk-local-endpoint").touch()
    part = work / "staging" / "downloads" / "m.abc.tar.gz.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"partial")
    result = runner.invoke(app, ["local", "down", "--endpoint", "old"])
    assert result.exit_code == 0, result.output
    assert not part.exists() and not (work / "staging").exists()
    assert work.is_dir()  # only staging goes


def test_up_refuses_a_state_dir_others_may_write(tmp_path: Path, state_dir: Path) -> None:
    """Another user could plant a state file naming any process there: refused, not used."""
    state_dir.chmod(0o777)
    result = runner.invoke(app, ["local", "up", "--store", str(tmp_path), "--detach"])
    assert result.exit_code == 1, result.output
    assert "writable by other users" in result.output and "chmod 700" in result.output
    assert list(state_dir.iterdir()) == []  # no log, no state written there


def test_a_work_dir_another_user_owns_is_refused(tmp_path: Path) -> None:
    """Another user's directory (pre-created to read or swap what the endpoint extracts)."""
    from infra.targets.local import workdir
    from tdk.errors import UnsafeInputError

    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    planted = tmp_path / "work"
    planted.mkdir(mode=0o777)
    os.chown(planted, 65534, 65534)
    with pytest.raises(UnsafeInputError, match="belongs to uid 65534"):
        workdir.claim(planted)
    assert list(planted.iterdir()) == []  # no marker written into it
