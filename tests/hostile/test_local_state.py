"""The local endpoint's state file against reuse and planting (issue 25 item 6): `tdk local down`
signals only the process that wrote the state file, never another one that now has its pid."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.local.endpoint_state import process_identity, read_state
from tests.conftest import ROOT
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import (
    alive,
    make_release,
    reaped,
    write_python_model,
)

runner = CliRunner()


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("TDK_STATE_DIR", str(folder))
    return folder


def _plant(state_dir: Path, pid: int, release_key: str = "release", **extra: str) -> Path:
    """A state file for the endpoint ``old`` at ``pid`` (``release_key``: ``store`` is how the
    tdk before issue 50 called the release URL)."""
    work = state_dir / "local-old"
    work.mkdir()
    state = {
        "name": "old",
        "pid": pid,
        "port": 1,
        "url": "http://127.0.0.1:1",
        release_key: "file:///nowhere",
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


@pytest.mark.parametrize("release_key", ["release", "store"], ids=["now", "written-by-earlier-tdk"])
def test_down_signals_the_process_the_state_file_identifies(
    state_dir: Path, bystander: subprocess.Popen[bytes], release_key: str
) -> None:
    """The identity check is what decides: with the bystander's own identity it is stopped;
    a state file an earlier tdk wrote (the release URL under ``store``) is read alike."""
    _plant(state_dir, bystander.pid, release_key, identity=process_identity(bystander.pid))
    state = read_state("old")
    assert state is not None and state.release == "file:///nowhere"
    result = runner.invoke(app, ["local", "down", "--endpoint", "old", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"name": "old", "stopped": bystander.pid}
    assert bystander.wait(60) == -15  # SIGTERM


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
    result = runner.invoke(app, ["local", "up", "--release", str(tmp_path), "--detach"])
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


def _up_detached(store: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    args = ["local", "up", "--release", str(store), "--name", "dup", "--port", "0", "--detach"]
    return subprocess.Popen(
        [sys.executable, "-m", "cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )


@pytest.mark.e2e
def test_two_ups_of_one_name_at_once_the_second_refuses(tmp_path: Path, state_dir: Path) -> None:
    """Both start together; exactly one endpoint runs, the other refuses before touching the
    work directory, the log or the state file of the first."""
    _runtime_or_skip()
    repo = tmp_path / "repo"
    write_python_model(repo, "sleeper")
    store = tmp_path / "store"
    make_release(repo, store, copies=1)
    env = dict(os.environ, TDK_STATE_DIR=str(state_dir), PYTHONPATH=str(ROOT))
    both = [_up_detached(store, env), _up_detached(store, env)]
    try:
        outputs = [proc.communicate(timeout=120)[0].decode() for proc in both]
        codes = sorted(proc.returncode for proc in both)
        assert codes == [0, 1], outputs
        refusal = next(out for proc, out in zip(both, outputs, strict=True) if proc.returncode)
        # refused by the name's lock while the first starts, or by its state file once it
        # runs: which one depends on how fast the first started (issue 45 item 3)
        assert re.search(r"a local endpoint named 'dup' is already (starting or )?running", refusal)
        assert "Traceback" not in refusal
        state = json.loads((state_dir / "local-dup.json").read_text())
        invoke = ["invoke", "--endpoint", "dup", "--target-model", "sleeper-0.tar.gz"]
        result = runner.invoke(app, [*invoke, "-i", "x=[0.0]", "--json"])
        assert result.exit_code == 0, result.output
        assert (state_dir / "local-dup" / "repository" / "sleeper-0").is_dir()
        assert alive(state["pid"])
    finally:
        down = runner.invoke(app, ["local", "down", "--name", "dup"])
        assert down.exit_code == 0, down.output


def test_a_name_held_by_a_running_endpoint_is_refused_at_once(state_dir: Path) -> None:
    from infra.targets.local import lock

    held = lock.hold_name("busy")
    try:
        result = runner.invoke(app, ["local", "up", "--release", "/nowhere", "--name", "busy"])
        assert result.exit_code == 1, result.output
        assert "already starting or running" in result.output
        assert "local down --endpoint busy" in result.output
    finally:
        os.close(held)


def test_a_fifo_manifest_does_not_hang_local_up_detach(tmp_path: Path, state_dir: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    os.mkfifo(store / "manifest.json")
    env = dict(os.environ, TDK_STATE_DIR=str(state_dir), PYTHONPATH=str(ROOT))
    args = ["local", "up", "--release", str(store), "--name", "fifo", "--port", "0", "--detach"]
    done = subprocess.run(
        [sys.executable, "-m", "cli", *args], env=env, capture_output=True, timeout=60, check=False
    )
    output = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 1, output
    assert "manifest.json is not a regular file" in output and "Traceback" not in output
    assert not (state_dir / "local-fifo.json").exists()


def test_a_starting_endpoint_honours_sigterm(tmp_path: Path, state_dir: Path) -> None:
    """Its store never answers (a listener nobody accepts on, then a silent one): SIGTERM
    stops it at once, not after the store's timeouts and retries (minutes)."""
    _runtime_or_skip()
    with socket.create_server(("127.0.0.1", 0)) as silent:
        silent.settimeout(60)
        env = dict(os.environ, TDK_STATE_DIR=str(state_dir), PYTHONPATH=str(ROOT))
        env |= {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
        # the store's own give-up far beyond the wait below, so only SIGTERM can end it in time
        # on a loaded machine (its 30 s default was twice the 15 s this test allowed)
        env |= {"TDK_S3_READ_TIMEOUT": "3600", "TDK_S3_CONNECT_TIMEOUT": "3600"}
        args = ["--release", "s3://bucket/release", "--name", "stuck", "--port", "0"]
        args += ["--store-endpoint-url", f"http://127.0.0.1:{silent.getsockname()[1]}"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "infra.targets.local.serve", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
        with reaped(proc):
            conn, _ = silent.accept()  # it is reading its manifest now, and waits
            with conn:
                proc.send_signal(signal.SIGTERM)
                _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert b"Traceback" not in err, err.decode()
    assert not (state_dir / "local-stuck.json").exists()


def test_an_unknown_triton_netns_mode_is_refused(tmp_path: Path, state_dir: Path) -> None:
    result = runner.invoke(app, ["local", "up", "--release", str(tmp_path), "--triton-netns", "x"])
    assert result.exit_code == 2, result.output
    assert "--triton-netns 'x' is not one of auto, on, off" in result.output
    assert "--triton-netns auto" in result.output
    assert list(state_dir.iterdir()) == []
