"""``tdk local up --replicas N --detach`` holds the endpoint name's lock as a single endpoint's
``up`` does (issue 46): two starts of one name race, and the second is refused at once, naming
the endpoint and the fix, without touching the first's log or state; before, the second passed
(no state file yet while the first starts), truncated the first's log and started a second
supervisor over the same work directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.local.endpoint_state import read_state, running_names
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import children, wait_for
from tests.local.test_replicas import needs_haproxy

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
DAEMON = "infra.targets.local.replica_daemon"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@needs_haproxy
def test_a_second_replica_set_of_one_name_is_refused_while_the_first_starts(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runtime_or_skip()
    state = tmp_path / "state"
    monkeypatch.setenv("TDK_STATE_DIR", str(state))
    up = ["local", "up", "--release", str(release), "--endpoint", "dup", "--replicas", "2"]
    up += ["--port", "0", "--detach"]
    env = dict(os.environ, TDK_STATE_DIR=str(state), PYTHONPATH=str(ROOT))
    first = subprocess.Popen(
        [sys.executable, "-m", "cli", *up], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    daemon = 0
    try:

        def supervisor() -> int:
            assert first.poll() is None, first.communicate()[0].decode()
            return next((p for p in children(first.pid) if DAEMON in _cmdline(p)), 0)

        daemon = wait_for(supervisor, 60, "the first set's supervisor to be spawned")
        os.kill(daemon, signal.SIGSTOP)  # the first is mid-start, and stays so
        assert read_state("dup") is None, "the first started before the race was held"
        log = (state / "local-dup.log").read_bytes()
        second = CliRunner().invoke(app, up)
        assert second.exit_code == 1, second.output
        assert "a local endpoint named 'dup' is already starting or running" in second.output
        assert "tdk local down --endpoint dup" in second.output, second.output
        assert (state / "local-dup.log").read_bytes() == log  # the first's log untouched
        os.kill(daemon, signal.SIGCONT)
        output = first.communicate(timeout=300)[0].decode()
        assert first.returncode == 0, output  # the first one starts undisturbed
        assert read_state("dup") is not None
    finally:
        if daemon:
            with suppress(ProcessLookupError):
                os.kill(daemon, signal.SIGCONT)
        if first.poll() is None:
            first.kill()
            first.wait()
        down = CliRunner().invoke(app, ["local", "down", "--endpoint", "dup"])
    assert down.exit_code == 0, down.output
    assert running_names() == []


@needs_haproxy
def test_a_foreground_replica_set_holds_the_name_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.targets.local import lock

    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    held = lock.hold_name("busy")  # as a first `up` of that name holds it while it starts
    try:
        up = ["local", "up", "--release", str(tmp_path / "nowhere"), "--endpoint", "busy"]
        result = CliRunner().invoke(app, [*up, "--replicas", "2"])
    finally:
        os.close(held)
    assert result.exit_code == 1, result.output
    assert "a local endpoint named 'busy' is already starting or running" in result.output
    assert not (tmp_path / "state" / "local-busy-replicas").exists()  # nothing started
