"""A local endpoint's state file: ``<state dir>/local-<name>.json`` (pid, port, release, work
dir, log), written by the endpoint once it serves and removed when it stops; how ``tdk local
status``, ``invoke``, ``switch`` and ``down`` find a running endpoint, and how they tell that its
pid is still that endpoint (``process_identity``) and not a process that reused the pid.

Kept apart from ``serve`` (which runs, spawns and stops endpoints): what only reads state files
(the client, ``tdk local status``) does not import the server's HTTP protocol (uvicorn).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from infra.targets.local import stopping
from infra.targets.local.options import ENDPOINT_NAME, check_name
from infra.triton_runtime.private import check_state_dir, state_dir, write_private
from tdk.errors import UsageError


@dataclass(frozen=True)
class EndpointState:
    """What a running endpoint writes for ``status`` and ``down``."""

    name: str
    pid: int
    port: int
    url: str
    #: the release URL it was started with (``--release``; ``tdk local switch`` changes what
    #: it serves: its ``/tdk/status`` says which)
    release: str
    workdir: str
    log: str
    #: who ``pid`` is: boot id and start time (``process_identity``); a reused pid differs
    identity: str = ""
    #: what ``POST /tdk/switch`` asks for: only who can read this file switches releases
    control: str = ""


def state_path(name: str) -> Path:
    """``<state dir>/local-<name>.json``; the name is checked, so the path stays in the dir."""
    return state_dir() / f"local-{check_name(name)}.json"


#: keys of state files an earlier tdk wrote: old -> new (its ``store`` was the release URL)
OLD_STATE_KEYS = {"store": "release"}


def _renamed(fields: dict[str, Any]) -> dict[str, Any]:
    """A state file's fields with the keys an earlier tdk wrote under their new names, so an
    endpoint started by it is still found, shown and stopped."""
    return {OLD_STATE_KEYS.get(key, key): value for key, value in fields.items()}


def read_state(name: str) -> EndpointState | None:
    """The endpoint's state file, or None when absent, not ours, or its process is gone (or
    its pid now belongs to another process: the file is stale then, and removed)."""
    path = state_path(name)
    try:
        if path.stat().st_uid != os.geteuid():
            return None  # planted by another user: never act on it
        state = EndpointState(**_renamed(json.loads(path.read_text())))
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return None
    if not is_endpoint(state):
        path.unlink(missing_ok=True)
        return None
    return state


START = "start one with `tdk local up --release URL --detach`"


def running_names() -> list[str]:
    """The names of the local endpoints of this user that run now, sorted."""
    found = []
    for path in sorted(state_dir().glob("local-*.json")):
        name = path.name.removeprefix("local-").removesuffix(".json")
        if ENDPOINT_NAME.fullmatch(name) and read_state(name) is not None:
            found.append(name)
    return found


def not_running_hint(name: str) -> str:
    """What to do when no endpoint ``name`` runs: the ones that do run, by the flag that
    names them, or how to start one."""
    others = [other for other in running_names() if other != name]
    if not others:
        return START
    named = ", ".join(f"`--endpoint {shlex.quote(other)}`" for other in others)
    return f"running here: pass {named}; or {START}"


def running_state(name: str, hint: str | None = None) -> EndpointState:
    """The state file of the local endpoint ``name``; UsageError when none runs."""
    state = read_state(name)
    if state is None:
        raise UsageError(
            f"no local endpoint named {name!r} is running", hint=hint or not_running_hint(name)
        )
    return state


def process_identity(pid: int) -> str:
    """``<boot id>:<start time>`` of ``pid`` (``/proc/<pid>/stat`` field 22, clock ticks since
    boot): a pid reused by another process, even after a reboot, has another; "" when gone."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return ""
    if fields[0] == "Z":
        return ""
    return f"{boot}:{fields[19]}"  # fields after "comm" start at field 3


def session_processes(session: int) -> set[int]:
    """The live processes of session ``session`` (a detached endpoint leads a session of its
    own: its front, Triton and the Python stubs); zombies are gone already."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":  # field 6: the session id
                found.add(int(entry.name))
    return found


def is_endpoint(state: EndpointState) -> bool:
    """Whether ``state.pid`` is still the endpoint that wrote ``state``. A state file without
    an identity (written by an older tdk) is trusted only when the process runs ``serve``."""
    current = process_identity(state.pid)
    if not current:
        return False
    if state.identity:
        return current == state.identity
    try:
        command = Path(f"/proc/{state.pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"infra.targets.local.serve" in command


def write_state(state: EndpointState) -> None:
    """Write ``state`` to its file, readable by this user only (what ``read_state`` finds)."""
    path = state_path(state.name)
    check_state_dir(path.parent)
    write_private(path, json.dumps(asdict(state), indent=2).encode())


def remove_state(name: str) -> None:
    """Remove the state file of ``name`` when this process wrote it (and its stop note)."""
    with contextlib.suppress(OSError):
        current = json.loads(state_path(name).read_text())
        if current.get("pid") == os.getpid():
            state_path(name).unlink()
            stopping.clear_note(name)
