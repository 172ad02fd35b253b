"""Ctrl-C at any moment of `tdk local up`'s start prints no traceback, exits 130 and leaves no
process and no state file (moved here from test_local_state.py, issue 45 item 3).

The moments are timed ones (the CLI loading) and events the test waits for (its first line,
its first process, ready): a loaded machine moves the timed ones, never the events."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import (
    alive,
    children,
    make_release,
    reaped,
    wait_for,
    write_python_model,
)

#: seconds after the start: the interpreter starting, then the CLI loading
_CTRL_C_SECONDS = (0.1, 0.2, 0.3, 0.45, 0.6)
#: events: its first line (the release is read next), its first process (Triton starting),
#: its ready line
_FIRST_LINE = "starting local endpoint"
_CTRL_C_EVENTS = (_FIRST_LINE, "a process of its own", "ready: ")
#: what CPython 3.11's site module prints when a Ctrl-C lands in a .pth file's import: it is
#: wrapped in a RuntimeError (inside a class's __set_name__), reported, and the start goes on
_SWALLOWED_BY_SITE = "Remainder of file ignored"
_DEADLINE_S = 120.0  # a safety net: a loaded machine starts Triton in seconds
#: the kit's own code: a traceback frame in one of these means tdk's code was running
_KIT = tuple(ROOT / package for package in ("cli", "infra", "packager", "tdk"))


class _Started:
    """A command started by the test: its output as it comes, every process seen under it."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self.lines: list[str] = []
        self.seen: set[int] = set()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout or ():
            self.lines.append(line.decode(errors="replace"))

    def printed(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def ended(self) -> bool:
        self.seen |= children(self.proc.pid)  # what it starts while stopping counts too
        return self.proc.poll() is not None

    def ctrl_c(self) -> None:
        self.seen |= children(self.proc.pid)
        self.proc.send_signal(signal.SIGINT)

    def wait_ended(self, after: str) -> None:
        try:
            wait_for(self.ended, _DEADLINE_S, f"it to exit after {after}")
        except AssertionError as exc:  # pragma: no cover - only when the test fails
            self.proc.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER=1: its threads' stacks
            self.proc.wait(_DEADLINE_S)
            self.reader.join(_DEADLINE_S)
            raise AssertionError(f"{exc}; its output:\n{''.join(self.lines)}") from None


def _interrupted_at(
    command: list[str], env: dict[str, str], moment: float | str
) -> tuple[int, str, set[int]]:
    """Start ``command``, Ctrl-C it at ``moment``: its exit status, its output, and every
    process it was seen to start."""
    run = _Started(command, env)
    with reaped(run.proc):
        if isinstance(moment, float):
            time.sleep(moment)  # the moment of the Ctrl-C under test (nothing is awaited)
        elif moment == "a process of its own":
            wait_for(lambda: children(run.proc.pid), _DEADLINE_S, moment)
        else:
            wait_for(lambda: run.printed(moment), _DEADLINE_S, repr(moment))
        run.ctrl_c()
        wait_for(
            lambda: run.ended() or run.printed(_SWALLOWED_BY_SITE),
            _DEADLINE_S,
            f"it to exit after a Ctrl-C at {moment!r}",
        )
        if not run.ended():  # the interpreter's start swallowed it: stop it as a user would
            wait_for(lambda: run.printed(_FIRST_LINE), _DEADLINE_S, repr(_FIRST_LINE))
            run.ctrl_c()
        run.wait_ended(f"a Ctrl-C at {moment!r}")
    run.reader.join(_DEADLINE_S)
    return run.proc.returncode, "".join(run.lines), run.seen


def _before_tdk_ran(returncode: int, output: str) -> bool:
    """The Ctrl-C fell before tdk's first line ran: killed by the signal before Python set its
    handler, swallowed by the site module, or a KeyboardInterrupt whose frames are all the
    interpreter's or the installer's entry script's (``from cli.main import main`` before
    ``cli`` runs)."""
    if returncode == -signal.SIGINT and not output:
        return True
    if "init_import_site" in output or _SWALLOWED_BY_SITE in output:
        return True
    frames = [Path(name) for name in re.findall(r'^  File "([^"]+)"', output, re.MULTILINE)]
    ours = any(frame.is_relative_to(kit) for frame in frames for kit in _KIT)
    return "KeyboardInterrupt" in output and bool(frames) and not ours


@pytest.mark.e2e
def test_ctrl_c_early_in_local_up_prints_no_traceback_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    """A timed moment that falls inside the interpreter's own start is not ours to handle
    and not counted; every event is."""
    _runtime_or_skip()
    write_python_model(tmp_path / "repo", "sleeper")
    store = tmp_path / "store"
    make_release(tmp_path / "repo", store, copies=1)
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    tdk = str(Path(sys.executable).with_name("tdk"))
    env = dict(os.environ, TDK_STATE_DIR=str(state_dir), PYTHONFAULTHANDLER="1")
    command = [tdk, "local", "up", "--release", str(store), "--port", "0"]
    for moment in (*_CTRL_C_SECONDS, *_CTRL_C_EVENTS):
        returncode, output, started = _interrupted_at(command, env, moment)
        wait_for(
            lambda: not [p for p in started if alive(p)],  # noqa: B023
            _DEADLINE_S,
            f"the processes started before a Ctrl-C at {moment!r} to end",
        )
        assert not (state_dir / "local-local.json").exists(), moment
        if isinstance(moment, float) and _before_tdk_ran(returncode, output):
            continue
        assert "Traceback" not in output, (moment, output)
        assert returncode == 130, (moment, returncode, output)
