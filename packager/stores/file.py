"""The ``file://`` store: a directory on a local filesystem, written atomically.

Files are built in ``<root>/.tdk-staging/`` (same filesystem, outside ``mme/`` and
``repository/``) and renamed into place, so a killed publish never leaves a partial file where
Triton or an endpoint would read it; the next publish removes what it left.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from packager.archive import copy_range
from packager.stores.base import (
    Progress,
    Store,
    _noop,
    locked_workdir,
    remove_unlocked,
    sha256_file,
)

STAGING_DIR = ".tdk-staging"
# What tdk before 0.2 left when killed: staging trees at the root, mkstemp files next to targets.
_LEGACY_DIR = re.compile(r"^\.tdk-staging-[a-z0-9_]{8}$")
_LEGACY_FILE = re.compile(r"^\.tdk-[a-z0-9_]{8}$")


class FileStore(Store):
    """A directory on this machine (``file:///abs/path`` or a plain path)."""

    def __init__(self, url: str, root: Path) -> None:
        super().__init__(url)
        self.root = root
        self._work: Path | None = None

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def unsafe_root(self, prune: bool) -> str | None:
        if self.root == Path(self.root.anchor):
            return "it is the root of the filesystem"
        if self.root == Path.home().resolve():
            return "it is your home directory"
        return None

    @property
    def local_root(self) -> Path | None:
        return self.root

    @property
    def root_parts(self) -> list[str]:
        return list(self.root.resolve().parts[1:])

    def exists_at(self, parts: list[str]) -> bool:
        return Path(self.root.anchor, *parts).is_file()

    def sha256_of(self, key: str) -> str | None:
        path = self._path(key)
        return sha256_file(path) if path.is_file() else None

    def checksum_matches(self, key: str, sha256: str) -> bool | None:
        """The sha256 of the stored bytes; a link or anything but a plain file is not ours."""
        path = self._path(key)
        if path.is_symlink() or not path.is_file():
            return False
        try:
            return sha256_file(path) == sha256
        except OSError as exc:
            raise self._error("read", key, exc) from exc

    @contextmanager
    def staging(self) -> Iterator[Path]:
        with locked_workdir(self.root / STAGING_DIR, self.url) as work:
            self._work = work
            try:
                yield work
            finally:
                self._work = None

    def clean_leftovers(self, owned: set[str]) -> list[str]:
        removed = remove_unlocked(self.root / STAGING_DIR)
        if not self.root.is_dir():
            return removed
        for path in self.root.iterdir():
            if path.is_dir() and not path.is_symlink() and _LEGACY_DIR.match(path.name):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(str(path))
        for top in (self.root, self._path("mme"), self._path("repository")):
            found = top.rglob(".tdk-*") if top != self.root else top.glob(".tdk-*")
            for path in sorted(found):
                if _LEGACY_FILE.match(path.name) and path.is_file() and not path.is_symlink():
                    path.unlink(missing_ok=True)
                    removed.append(str(path))
        return removed

    def _atomic_write(self, key: str, write: Callable[[Path], None]) -> None:
        if self._work is None:
            with self.staging():
                self._atomic_write(key, write)
            return
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix="part-", dir=self._work)
            os.close(fd)
            try:
                write(Path(tmp))
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as exc:
            raise self._error("write", key, exc) from exc

    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        size = path.stat().st_size
        if move and path.stat().st_dev == self.root.stat().st_dev:
            self._atomic_write(key, lambda tmp: os.replace(path, tmp))
        else:

            def copy(tmp: Path) -> None:
                with path.open("rb") as src, tmp.open("wb") as dst:
                    copy_range(src.fileno(), dst.fileno(), 0, size)

            self._atomic_write(key, copy)
        progress(size)

    def copy(self, source_key: str, key: str, sha256: str) -> None:
        # Release files are only ever replaced, never rewritten in place, so equal content can
        # share one inode: N copies of the same weights cost one write.
        source = self._path(source_key)

        def link(tmp: Path) -> None:
            tmp.unlink()
            os.link(source, tmp)

        self._atomic_write(key, link)

    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        self._atomic_write(key, lambda tmp: _write_bytes(tmp, data))

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except OSError as exc:
            raise self._error("read", key, exc) from exc

    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        source = self._path(key)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".part")
            shutil.copyfile(source, tmp)
            progress(tmp.stat().st_size)
            os.replace(tmp, dest)
        except OSError as exc:
            raise self._error("read", key, exc) from exc

    def delete(self, key: str) -> None:
        """Remove ``key`` and the directories it leaves empty: an empty model directory in
        ``repository/`` is a model Triton would try (and fail) to load."""
        path = self._path(key)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise self._error("delete", key, exc) from exc
        for parent in path.parents:
            if parent == self.root or not parent.is_relative_to(self.root):
                break
            try:
                parent.rmdir()
            except OSError:
                break  # not empty (or not ours to remove)

    # Conditional writes. A version token is the content's sha256 (a lock record is unique).
    # Create: the record is written whole to a private file, then hard-linked into place, which
    # fails if the name exists (an exclusive create, like O_CREAT|O_EXCL, that no reader sees
    # half-written). Replace: rename the current file away (only one renamer can succeed), check
    # it is the version we were given, then create exclusively; a wrong version is put back.

    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        try:
            data = self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._error("read", key, exc) from exc
        return data, hashlib.sha256(data).hexdigest()

    def _private(self, data: bytes) -> Path:
        if self._work is None:
            raise AssertionError("conditional writes run inside staging()")
        fd, tmp = tempfile.mkstemp(prefix="cond-", dir=self._work)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        return Path(tmp)

    def create_exclusive(self, key: str, data: bytes) -> str | None:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._private(data)
            try:
                return self._link_new(key, tmp, data)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise self._error("write", key, exc) from exc

    def _link_new(self, key: str, tmp: Path, data: bytes) -> str | None:
        try:
            os.link(tmp, self._path(key))
        except FileExistsError:
            return None
        return hashlib.sha256(data).hexdigest()

    def _take(self, key: str, token: str) -> Path | None:
        """Move the current version of ``key`` aside if it is ``token``; its new path."""
        assert self._work is not None
        taken = self._work / f"taken-{uuid.uuid4().hex}"
        try:
            os.rename(self._path(key), taken)
        except FileNotFoundError:
            return None  # someone else moved or deleted it first
        if sha256_file(taken) == token:
            return taken
        with contextlib.suppress(FileExistsError):
            os.link(taken, self._path(key))  # not ours to take: put it back
        taken.unlink()
        return None

    def replace_if(self, key: str, data: bytes, token: str) -> str | None:
        try:
            tmp = self._private(data)  # written and synced before the name changes
            try:
                swapped = _exchange(tmp, self._path(key))
                if swapped is None:  # the filesystem cannot swap: move aside, then create
                    taken = self._take(key, token)
                    if taken is None:
                        return None
                    taken.unlink()
                    return self._link_new(key, tmp, data)
                if not swapped:
                    return None  # no such lock
                if sha256_file(tmp) == token:  # tmp now holds the version we replaced
                    return hashlib.sha256(data).hexdigest()
                _exchange(tmp, self._path(key))  # another version: put it back
                return None
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise self._error("write", key, exc) from exc

    def delete_if(self, key: str, token: str) -> bool:
        try:
            taken = self._take(key, token)
            if taken is None:
                return False
            taken.unlink()
            return True
        except OSError as exc:
            raise self._error("delete", key, exc) from exc

    def list_sizes(self, prefix: str) -> dict[str, int]:
        base = self._path(prefix)
        if not base.is_dir():
            return {}
        found = (p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".tdk-"))
        return {p.relative_to(self.root).as_posix(): p.stat().st_size for p in found}


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool | None:
    """Swap two names atomically (``renameat2(RENAME_EXCHANGE)``, Linux 3.15+ on ext4, xfs,
    btrfs, tmpfs): neither name is ever absent. False when ``b`` does not exist; None when this
    system or filesystem cannot swap."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return None
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code == errno.ENOENT:
        return False
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return None
    raise OSError(code, os.strerror(code), str(b))


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)
