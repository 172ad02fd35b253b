"""The Python backend's shared memory (``/dev/shm/<prefix>*``): named per owner, removed by it.

Each Triton we start gets its own region prefix ``tdk<owner pid>_<token>_`` (Triton's
``--backend-config=python,shm-region-prefix-name=...``); its stubs exchange every request and
response (prompts, outputs) through those files. Boost, which the Python backend uses, creates
them 0644 whatever the umask, so they are made 0600 after each load (``protect_regions``), and
they go when that Triton stops. What a killed owner left is swept at the next start: a file is
removed only when its name has our pattern, it is a regular file owned by this user, and the
owner pid in its name no longer runs. Nothing else in /dev/shm is touched. (A Triton in
namespaces of its own, ``netns.py``, has a private tmpfs on /dev/shm instead.)
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

SHM_DIR = Path("/dev/shm")
_OURS = re.compile(r"tdk(?P<pid>[0-9]{1,10})_[0-9a-f]{1,32}_")


def region_prefix(owner_pid: int, token: int) -> str:
    """The region prefix of one Triton started by process ``owner_pid``."""
    return f"tdk{owner_pid}_{token:x}_"


def _ours(entry: os.DirEntry[str]) -> bool:
    """A regular file (not a link) owned by this user."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a pid of another user's process counts)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] != "Z"


def protect_regions(prefix: str, directory: Path = SHM_DIR) -> int:
    """Make this user's files named ``<prefix>*`` 0600 (boost, which the Python backend uses,
    creates them 0644 whatever the umask); how many were open to others."""
    changed = 0
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            if not (entry.name.startswith(prefix) and _ours(entry)):
                continue
            with contextlib.suppress(FileNotFoundError):
                if stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode) & 0o077:
                    os.chmod(entry.path, 0o600, follow_symlinks=False)
                    changed += 1
    return changed


def remove_regions(prefix: str, directory: Path = SHM_DIR) -> int:
    """Remove this user's regular files named ``<prefix>*``; how many went."""
    removed = 0
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and _ours(entry):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def sweep_orphans(directory: Path = SHM_DIR) -> list[str]:
    """Remove the regions whose owner process is gone (a front killed by SIGKILL); the names
    removed. Regions of running owners (this process's own Tritons included) stay."""
    gone: list[str] = []
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            found = _OURS.match(entry.name)
            if found is None or not _ours(entry):
                continue
            pid = int(found["pid"])
            if pid == os.getpid() or _running(pid):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                gone.append(entry.name)
    return gone
