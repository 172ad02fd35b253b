"""What the local endpoint keeps to its own user: directories, files and Triton's secret.

Directories are 0700 and files 0600, owned by the user running the endpoint; a directory
another user owns (or may write into) is refused rather than trusted. The repository API's
secret never reaches Triton's command line where the kernel lets the launcher trace Triton
(``netns.spawn_hiding``); where it does not, once Triton has parsed it, ``hide_argument``
overwrites it in Triton's argv, so ``/proc/<pid>/cmdline`` (world readable) no longer shows it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO

from tdk.errors import UnsafeInputError

STATE_ENV = "TDK_STATE_DIR"
DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) as 0700, or check an existing one is ours and
    not writable by others; an existing one of ours that others may read is made 0700."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.geteuid():
        raise UnsafeInputError(
            f"{path} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()})",
            hint="choose a directory of your own (--workdir, or TDK_STATE_DIR for state files)",
        )
    if stat.S_IMODE(info.st_mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path


def state_dir() -> Path:
    """Where endpoints keep their state files (``$TDK_STATE_DIR``, default ``~/.cache/tdk``)."""
    return Path(os.environ.get(STATE_ENV) or Path.home() / ".cache" / "tdk").expanduser()


def check_state_dir(path: Path) -> Path:
    """The directory holding endpoints' state files: ours, and nobody else may write in it
    (others could plant a state file naming any process). Created 0700 when absent."""
    if not path.exists():
        return private_dir(path)
    info = path.stat()
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeInputError(
            f"{path} (the local endpoints' state dir) is writable by other users or not yours",
            hint=f"`chmod 700 {path}` if it is yours, or point TDK_STATE_DIR at a private "
            "directory",
        )
    return path


def open_private(path: Path, mode: str = "wb") -> IO[bytes]:
    """``path`` opened for writing (``wb`` or ``ab``) as a 0600 file, whatever it was before."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_APPEND if mode == "ab" else os.O_TRUNC
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically as a 0600 file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        with open_private(tmp) as out:
            out.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _arg_area(pid: int) -> tuple[int, int]:
    """Where ``pid``'s argv lives in its memory (``/proc/<pid>/stat`` fields 48 and 49)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[45]), int(fields[46])  # fields after "comm" start at field 3


def hide_argument(pid: int, secret: str) -> bool:
    """Overwrite ``secret`` in the argv of our child ``pid``; whether none is left visible.

    Triton copies its options into its own strings while parsing, so the argv bytes are not
    read again. Writing another process's memory needs ptrace rights over it (our own child,
    same user); where the kernel refuses, the secret stays visible and False is returned.
    """
    needle = secret.encode()
    try:
        start, end = _arg_area(pid)
        with open(f"/proc/{pid}/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            argv = memory.read(end - start)
            offset = argv.find(needle)
            while offset >= 0:
                memory.seek(start + offset)
                memory.write(b"x" * len(needle))
                offset = argv.find(needle, offset + len(needle))
        return needle not in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        with contextlib.suppress(OSError):
            return needle not in Path(f"/proc/{pid}/cmdline").read_bytes()
        return False
