"""This user's own directories: the tdk cache root, and private directories under it.

A directory shared by every account (``/tmp/tdk-staging``) lets another local user pre-create
it, read what is staged there, or break every other user's publish. What is built on the way to
a store is built in a directory only this user can enter: created 0700, refused when it is a
link or another account's, narrowed to 0700 when it is ours but wider.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from tdk.errors import StoreError


def cache_dir() -> Path:
    """``$TDK_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdk``, else ``~/.cache/tdk``."""
    configured = os.environ.get("TDK_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tdk"


def private_dir(path: Path) -> Path:
    """``path`` as a directory only this user can enter (created 0700 when missing).

    StoreError, naming the directory and its owner, when it is a link, not a directory, or
    owned by another account: nothing is written into it.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        info = path.lstat()
    except OSError as exc:
        raise StoreError(
            f"cannot create the private directory {path}: {exc.strerror}",
            hint="set TDK_CACHE_DIR to a directory of yours on a disk with room",
        ) from exc
    fix = "remove it (or ask its owner to), or set TDK_CACHE_DIR to a directory of yours"
    if not stat.S_ISDIR(info.st_mode):  # lstat: a symlink to a directory is not one
        raise StoreError(f"{path} is not a directory of yours (a link or a file)", hint=fix)
    if info.st_uid != os.getuid():
        raise StoreError(
            f"{path} belongs to uid {info.st_uid}, not to you (uid {os.getuid()}); tdk stages "
            "releases only in a directory no one else can read or replace",
            hint=fix,
        )
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def staging_root() -> Path:
    """Where publishes to cloud stores build their release: private to this user."""
    return private_dir(cache_dir() / "staging")
