"""One local endpoint per name and per work directory: an exclusive lock held for its life.

``flock`` on ``<state dir>/local-<name>.lock`` (and on the work dir's marker file): the kernel
drops it when the process ends, however it ends, so no stale lock outlives a SIGKILL. ``tdk
local up --detach`` takes the name lock before it touches the log or starts the child, and hands
the locked descriptor to the child, which keeps it: two `local up` of one name at once cannot
both pass, and the second never wipes the first's work directory.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from infra.triton_runtime.private import FILE_MODE, check_state_dir, state_dir
from tdk.errors import TdkError


class EndpointBusy(TdkError):
    """Another endpoint process holds the name or the work directory."""


def name_lock_path(name: str) -> Path:
    """``<state dir>/local-<name>.lock`` (``name`` already checked by the options)."""
    return state_dir() / f"local-{name}.lock"


def hold(path: Path, what: str, hint: str, inherited: int | None = None) -> int:
    """A descriptor holding the exclusive lock on ``path`` (``inherited``: one the parent locked
    and passed down); EndpointBusy naming ``what`` when another process holds it."""
    if inherited is not None:
        fd = inherited
        os.set_inheritable(fd, False)
    else:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise EndpointBusy(f"{what} is already starting or running", hint=hint) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def hold_name(name: str, inherited: int | None = None) -> int:
    """The lock of the endpoint name ``name``, for this process's life."""
    check_state_dir(state_dir())
    return hold(
        name_lock_path(name),
        f"a local endpoint named {name!r}",
        f"stop it with `tdk local down --endpoint {name}`, or pick another --endpoint",
        inherited,
    )
