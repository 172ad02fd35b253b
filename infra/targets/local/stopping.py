"""What a stopping local endpoint waits for, so `tdk local down` can say it when it waits long.

On SIGTERM the endpoint stops accepting connections, lets the requests in flight finish (each
within its invocation timeout: none is cut off), then stops Triton (``STOP_GRACE_S``, then
killed with its Python stubs) and removes its work dir. Most of that takes well under a second;
what can take longer is the requests in flight. The signal handler writes a small note
(``local-<name>.stopping.json`` in the state dir: how many requests and loaded models there were
when it was told to stop); ``tdk local down`` reads it once it has waited ``NOTICE_AFTER_S``
and says, once, what it is waiting for.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from infra.targets.local.options import check_name
from infra.triton_runtime.private import state_dir, write_private

#: a stop that has taken this long is said out loud (what it waits for, and for how long)
NOTICE_AFTER_S = 1.0
_MAX_NOTE_BYTES = 4096


@dataclass(frozen=True)
class Stopping:
    """What the endpoint had when it was told to stop."""

    requests: int
    loaded: int

    def waiting_for(self, kill_after_s: float) -> str:
        models = f"{self.loaded} model{'s' if self.loaded != 1 else ''} loaded"
        limit = f"killed after {kill_after_s:.0f} s"
        if self.requests:
            plural = "s" if self.requests != 1 else ""
            return (
                f"waiting for {self.requests} request{plural} in flight to finish, then for "
                f"Triton to stop ({models}; {limit})…"
            )
        return f"waiting for Triton to stop ({models}; {limit})…"


def note_path(name: str) -> Path:
    return state_dir() / f"local-{check_name(name)}.stopping.json"


def write_note(name: str, stopping: Stopping) -> None:
    """Written by the endpoint when told to stop (never fails the stop itself)."""
    with contextlib.suppress(OSError):
        write_private(note_path(name), json.dumps(asdict(stopping)).encode())


def read_note(name: str) -> Stopping | None:
    """The note of endpoint ``name``: None when absent, not ours, or not a note."""
    path = note_path(name)
    try:
        if path.stat().st_uid != os.geteuid() or path.stat().st_size > _MAX_NOTE_BYTES:
            return None
        found = json.loads(path.read_bytes())
        counts = (found["requests"], found["loaded"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not all(isinstance(c, int) and c >= 0 for c in counts):
        return None
    return Stopping(*counts)


def clear_note(name: str) -> None:
    note_path(name).unlink(missing_ok=True)


def note_on_exit(server: Any, name: str, counts: Callable[[], Stopping]) -> None:
    """Make ``server``'s (uvicorn's) exit signal handler write the note first."""
    handle = server.handle_exit

    def noted(sig: int, frame: Any) -> None:
        if not server.should_exit:  # the first signal: a second one (Ctrl-C twice) forces
            with contextlib.suppress(Exception):  # a signal handler must never raise
                write_note(name, counts())
        handle(sig, frame)

    server.handle_exit = noted


def waiting_message(name: str, pid: int, kill_after_s: float) -> str:
    """What ``tdk local down`` says once its wait passes ``NOTICE_AFTER_S``."""
    note = read_note(name)
    if note is None:  # not yet written, or an endpoint of an older tdk
        return f"waiting for the local endpoint (pid {pid}) to stop (killed after " \
            f"{kill_after_s:.0f} s)…"  # fmt: skip
    return note.waiting_for(kill_after_s)
