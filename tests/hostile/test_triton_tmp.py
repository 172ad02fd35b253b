"""The Python backend's directory (``mkdtemp("/tmp/python_env_XXXXXX")`` at each Triton start,
removed only on a clean exit) never outlives the work dir: where the kernel allows Triton a mount
namespace, its /tmp is a directory of its work dir, so a killed Triton's lands there (and is
gone at the next start or stop), never in this machine's /tmp. Other Tritons make theirs in
/tmp meanwhile: only this Triton's, found through its own root, is looked at."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from infra.triton_runtime.runtime import NS_TMP
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import (
    Endpoint,
    alive,
    infer_sleeper,
    python_endpoint,
    python_release,
    start_endpoint,
    wait_for,
)

pytestmark = pytest.mark.e2e


def _mount_namespace_or_skip(endpoint: Endpoint) -> None:
    if "mount" not in endpoint.triton()["protections"]:
        pytest.skip("this kernel refuses Triton a mount namespace")


def _python_envs(endpoint: Endpoint) -> list[Path]:
    """Where the Python backend's directories of the endpoint's Triton lie on this machine:
    each one Triton sees in its /tmp is the same directory in its work dir, none is in ours."""
    known = endpoint.triton()
    inside = sorted(Path(f"/proc/{known['pid']}/root/tmp").glob("python_env_*"))
    assert inside, "the Python backend made its directory in Triton's /tmp"
    work_tmp = endpoint.state_dir / "local-local" / NS_TMP
    for seen in inside:
        host = work_tmp / seen.name
        assert host.is_dir() and os.path.samestat(seen.stat(), host.stat()), seen
        assert not Path("/tmp", seen.name).exists(), seen
    assert "tmp" in known["protections"], known
    return [work_tmp / seen.name for seen in inside]


def test_a_killed_tritons_python_env_goes_with_its_restart(tmp_path: Path) -> None:
    _runtime_or_skip()
    with python_endpoint(tmp_path, "sleeper") as endpoint:
        _mount_namespace_or_skip(endpoint)
        assert infer_sleeper(endpoint) == [0.0]
        first = _python_envs(endpoint)
        os.killpg(os.getpgid(endpoint.status()["triton_pid"]), signal.SIGKILL)  # and launcher
        wait_for(lambda: endpoint.status()["triton_restarts"] == 1, 60, "Triton's restart")
        assert infer_sleeper(endpoint) == [0.0]
        second = _python_envs(endpoint)
        assert not [path for path in first if path.exists()], first
        assert set(second).isdisjoint(first)
    assert not [path for path in second if path.exists()]  # stop: Triton's /tmp goes
    assert not (endpoint.state_dir / "local-local" / NS_TMP).exists()


def test_a_killed_fronts_python_env_stays_in_the_work_dir_until_the_next_start(
    tmp_path: Path,
) -> None:
    _runtime_or_skip()
    store = python_release(tmp_path, "sleeper")
    first = start_endpoint(store, tmp_path / "state")
    try:
        _mount_namespace_or_skip(first)
        assert infer_sleeper(first) == [0.0]
        left = _python_envs(first)
        triton = first.triton()["pid"]
        first.proc.kill()  # SIGKILL: no cleanup of its own; Triton dies with it
        first.proc.wait()
        wait_for(lambda: not alive(triton), 30, "Triton to die with its front")
        assert all(path.is_dir() for path in left)  # in the work dir: not in this /tmp
        assert not [path for path in left if Path("/tmp", path.name).exists()]
        second = start_endpoint(store, tmp_path / "state")
        try:
            assert infer_sleeper(second) == [0.0]
            assert not [path for path in left if path.exists()]
            assert _python_envs(second)
        finally:
            second.stop()
    finally:
        first.stop()
