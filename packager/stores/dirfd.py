"""Walking a ``file://`` destination without following a link: every directory inside the
release root is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a folder
another user swapped for a symbolic link (``mme -> /tmp/victim``) is refused, never written
into or deleted from, however late the swap happens. The root, and every directory in it that
tdk writes or deletes in, must belong to this user."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """A directory of the destination that tdk will not pass through: a link, a file, or
    another user's; the message says which and why."""


def foreign_owner(uid: int) -> bool:
    """Whether ``uid`` is another user than the one running tdk."""
    return uid != os.geteuid()


def owner_problem(path: Path, found: os.stat_result) -> str | None:
    """Why the directory ``path`` (whose status is ``found``) is not ours to write in."""
    if foreign_owner(found.st_uid):
        return (
            f"{path} belongs to another user (uid {found.st_uid}); tdk writes and prunes "
            "only in directories of its own user, so no one else can plant links or files there"
        )
    return None


def open_root(root: Path) -> int:
    """A descriptor of the release root, refused (Refused) when another user owns it."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    problem = owner_problem(root, os.fstat(fd))
    if problem:
        os.close(fd)
        raise Refused(problem)
    return fd


def _open_child(parent: int, name: str, shown: Path, create: bool) -> int:
    if name in ("", ".", "..") or "/" in name:
        raise Refused(f"{shown} is not a path inside the release")
    try:
        fd = os.open(name, _DIR, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=parent)
        fd = os.open(name, _DIR, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        if stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise Refused(link_problem(shown)) from None
        raise
    problem = owner_problem(shown, os.fstat(fd))
    if problem:
        os.close(fd)
        raise Refused(problem)
    return fd


def link_problem(path: Path) -> str:
    return (
        f"{path} is a symbolic link; tdk never writes or deletes through a link inside a "
        "destination (it could point anywhere, e.g. into another user's files)"
    )


@contextmanager
def walk(root: Path, parts: Sequence[str], create: bool = False) -> Iterator[list[int]]:
    """Descriptors of ``root`` and of each directory ``parts`` names under it (created when
    ``create``), closed on exit; FileNotFoundError when one is absent, Refused when one is a
    link or another user's."""
    fds = [open_root(root)]
    try:
        shown = root
        for part in parts:
            shown = shown / part
            fds.append(_open_child(fds[-1], part, shown, create))
        yield fds
    finally:
        for fd in reversed(fds):
            os.close(fd)


@contextmanager
def parent_of(root: Path, key: str, create: bool = False) -> Iterator[tuple[int, str]]:
    """(descriptor of the directory holding ``key``, the key's last name)."""
    *dirs, name = key.split("/")
    if name in ("", ".", ".."):
        raise Refused(f"{root / key} is not a path inside the release")
    with walk(root, dirs, create) as fds:
        yield fds[-1], name


def remove(root: Path, key: str) -> None:
    """Unlink ``key`` (absent is fine) and rmdir the directories it leaves empty, each through
    its parent's descriptor, so a directory swapped for a link is never followed."""
    *dirs, name = key.split("/")
    try:
        context = walk(root, dirs)
        fds = context.__enter__()
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fds[-1])
        for depth in range(len(dirs), 0, -1):
            try:
                os.rmdir(dirs[depth - 1], dir_fd=fds[depth - 1])
            except OSError:
                break  # not empty (or not ours to remove)
    finally:
        context.__exit__(None, None, None)


def problem_in(root: Path, tops: Sequence[str], folders: Sequence[str]) -> str | None:
    """Why tdk must not write or prune at or under ``root/top`` for some top: a directory of
    another user, a link to a directory, or a link of any kind at one of ``folders`` (tdk
    makes directories there); None when there is none. One walk, links never followed.
    A link to a file is no problem: tdk replaces it, never writes through it."""
    for top in tops:
        path = root / top
        try:
            found = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(found.st_mode) and (top in folders or path.is_dir()):
            return link_problem(path)
        if not stat.S_ISDIR(found.st_mode):
            continue
        for folder, dirnames, _ in os.walk(path):
            problem = owner_problem(Path(folder), os.lstat(folder))
            if problem:
                return problem
            for name in sorted(dirnames):  # links to directories are listed, never entered
                if os.path.islink(os.path.join(folder, name)):
                    return link_problem(Path(folder, name))
    return None


def sizes(top: int, prefix: str) -> dict[str, int]:
    """Size of each regular file under the directory ``top`` (links and ``.tdk-*`` left
    out), keyed by ``prefix/``-relative path; links are never followed."""
    found_sizes: dict[str, int] = {}
    for folder, _, files, fd in os.fwalk(".", dir_fd=top):
        base = os.path.normpath(os.path.join(prefix, folder))
        for name in files:
            if name.startswith(".tdk-"):
                continue
            found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(found.st_mode):
                found_sizes[f"{base}/{name}" if base != "." else name] = found.st_size
    return found_sizes


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def exchange(a: Path, parent: int, b: str) -> bool | None:
    """Swap ``a`` with ``b`` in the directory ``parent`` atomically (``renameat2``
    ``RENAME_EXCHANGE``, Linux 3.15+ on ext4, xfs, btrfs, tmpfs): neither name is ever absent.
    False when ``b`` does not exist; None when this system or filesystem cannot swap."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return None
    result = renameat2(_AT_FDCWD, os.fsencode(a), parent, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code == errno.ENOENT:
        return False
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return None
    raise OSError(code, os.strerror(code), b)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
