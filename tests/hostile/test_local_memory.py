"""The Python backend's shared memory on the host's /dev/shm (issue 36 item 2; the fallback when
Triton cannot have namespaces of its own, made with ``NO_NAMESPACES``): 0600, gone on a Triton
restart and on `tdk local down`, and what a SIGKILLed front left is swept at the next start;
nothing else is ever deleted."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime import shm
from tests.hostile.endpoint_helpers import NO_NAMESPACES, no_namespaces_or_skip
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import (
    alive,
    infer_sleeper,
    python_endpoint,
    python_release,
    start_endpoint,
    wait_for,
)

SHM = Path("/dev/shm")


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_the_sweep_removes_only_regions_of_ours_whose_owner_is_gone(
    tmp_path: Path, bystander: subprocess.Popen[bytes]
) -> None:
    dead = _dead_pid()
    orphan = tmp_path / f"tdk{dead}_5eed_0f00-ba11"
    kept = {
        "live owner": tmp_path / f"tdk{bystander.pid}_5eed_region",
        "this process": tmp_path / f"tdk{os.getpid()}_5eed_region",
        "not our pattern": tmp_path / f"other{dead}_5eed_region",
        "no token": tmp_path / f"tdk{dead}_region",
    }
    for path in (orphan, *kept.values()):
        path.write_bytes(b"prompt")
    link = tmp_path / f"tdk{dead}_5eed_link"
    link.symlink_to(kept["not our pattern"])
    kept["a link"] = link
    if os.geteuid() == 0:  # another user's file with our pattern: never ours to delete
        planted = tmp_path / f"tdk{dead}_5eed_theirs"
        planted.write_bytes(b"theirs")
        os.chown(planted, 65534, 65534)
        kept["another user's"] = planted
    assert shm.sweep_orphans(tmp_path) == [orphan.name]
    assert not orphan.exists()
    for why, path in kept.items():
        assert path.is_symlink() or path.exists(), why


def test_protect_makes_regions_private(tmp_path: Path) -> None:
    region = tmp_path / "tdk1_ab_region"
    region.write_bytes(b"prompt")
    region.chmod(0o644)
    other = tmp_path / "tdk1_cd_region"
    other.write_bytes(b"x")
    other.chmod(0o644)
    assert shm.protect_regions("tdk1_ab_", tmp_path) == 1
    assert stat.S_IMODE(region.stat().st_mode) == 0o600
    assert stat.S_IMODE(other.stat().st_mode) == 0o644  # another prefix: not touched


def _regions(front_pid: int) -> set[Path]:
    return set(SHM.glob(f"tdk{front_pid}_*"))


@pytest.mark.e2e
def test_regions_are_private_and_go_with_their_triton(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runtime_or_skip()
    no_namespaces_or_skip()  # the fallback: Triton on this machine's /dev/shm
    with python_endpoint(tmp_path, "sleeper", wrapper=NO_NAMESPACES) as endpoint:
        monkeypatch.setenv("TDK_STATE_DIR", str(endpoint.state_dir))
        assert infer_sleeper(endpoint) == [0.0]
        first = _regions(endpoint.proc.pid)
        assert first, "the Python backend's regions carry the front's pid"
        assert {stat.S_IMODE(path.stat().st_mode) for path in first} == {0o600}
        # Triton and its stubs at once (the stubs get no chance to remove their regions)
        os.killpg(os.getpgid(endpoint.status()["triton_pid"]), signal.SIGKILL)  # and launcher
        wait_for(lambda: endpoint.status()["triton_restarts"] == 1, 60, "Triton's restart")
        assert not {path for path in first if path.exists()}  # the killed Triton's regions
        assert infer_sleeper(endpoint) == [0.0]
        assert _regions(endpoint.proc.pid)
        down = CliRunner().invoke(app, ["local", "down"])
        assert down.exit_code == 0, down.output
        endpoint.proc.wait(30)  # down waits for it: it is gone
        assert _regions(endpoint.proc.pid) == set()


@pytest.mark.e2e
def test_regions_of_a_killed_front_are_swept_at_the_next_start(tmp_path: Path) -> None:
    _runtime_or_skip()
    store = python_release(tmp_path, "sleeper")
    no_namespaces_or_skip()
    first = start_endpoint(store, tmp_path / "one", wrapper=NO_NAMESPACES)
    try:
        assert infer_sleeper(first) == [0.0]
        left = _regions(first.proc.pid)
        triton = first.status()["triton_pid"]
        first.proc.kill()  # SIGKILL: no cleanup of its own
        first.proc.wait()
        wait_for(lambda: not alive(triton), 30, "Triton to die with its front")
        assert left and all(path.exists() for path in left)
        second = start_endpoint(store, tmp_path / "two", wrapper=NO_NAMESPACES)
        try:
            assert not {path for path in left if path.exists()}
            assert infer_sleeper(second) == [0.0]
        finally:
            second.stop()
    finally:
        first.stop()
        for path in _regions(first.proc.pid):
            path.unlink(missing_ok=True)
