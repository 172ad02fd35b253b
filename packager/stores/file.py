"""The ``file://`` store: a directory on a local filesystem, written atomically.

Files are built in ``<root>/.tdk-staging/`` (same filesystem, outside ``mme/`` and
``repository/``) and renamed into place, so a killed publish never leaves a partial file where
Triton or an endpoint would read it; the next publish removes what it left.
"""

from __future__ import annotations

import contextlib
import errno
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
from packager.stores import dirfd
from packager.stores.base import (
    Progress,
    Store,
    _noop,
    download_via_part,
    locked_workdir,
    remove_unlocked,
    sha256_file,
)
from tdk.bounded import NotRegularFile, open_regular
from tdk.errors import StoreError

STAGING_DIR = ".tdk-staging"
#: what tdk writes at a release root (the lock and the object record included), checked for
#: links and foreign directories before a publish writes anything
RELEASE_TOPS = (
    "mme", "repository", STAGING_DIR, "manifest.json", "tdk-ledger.json", "tdk-publish.lock",
    "tdk-objects.json",
)  # fmt: skip
RELEASE_FOLDERS = ("mme", "repository", STAGING_DIR)
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
        try:
            found = self.root.stat()
        except OSError:
            return None  # absent (created by the publish) or unreachable (its error says)
        if not os.path.isdir(self.root):
            return None
        return dirfd.owner_problem(self.root, found) or dirfd.problem_in(
            self.root, RELEASE_TOPS, RELEASE_FOLDERS
        )

    @property
    def local_root(self) -> Path | None:
        return self.root

    @property
    def root_parts(self) -> list[str]:
        return list(self.root.resolve().parts[1:])

    def exists_at(self, parts: list[str]) -> bool:
        return Path(self.root.anchor, *parts).is_file()

    def _open(self, key: str, action: str = "read") -> int | None:
        """A descriptor of the regular file ``key``, reached without following a link; None
        when absent. A FIFO, device, link or directory there is a StoreError."""
        try:
            with dirfd.parent_of(self.root, key) as (parent, name):
                return open_regular(name, dir_fd=parent, follow=False)
        except FileNotFoundError:
            return None
        except dirfd.Refused as exc:
            raise self._refused(action, key, exc) from exc
        except NotRegularFile as exc:  # a FIFO would block the read, a device never end
            raise StoreError(
                f"cannot {action} {self.describe(key)}: {exc.strerror}",
                hint="a release holds regular files only: remove it, or publish elsewhere",
            ) from exc
        except OSError as exc:
            raise self._error(action, key, exc) from exc

    def _refused(self, action: str, key: str, exc: dirfd.Refused) -> StoreError:
        return StoreError(
            f"cannot {action} {self.describe(key)}: {exc}",
            hint="publish into a directory of your own with no links in it (or remove the link)",
        )

    def _hash(self, key: str) -> str | None:
        """The sha256 of the regular file ``key``; None when absent or anything else."""
        try:
            fd = self._open(key)
        except StoreError:
            return None
        if fd is None:
            return None
        digest = hashlib.sha256()
        with os.fdopen(fd, "rb") as handle:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
        return digest.hexdigest()

    def sha256_of(self, key: str) -> str | None:
        return self._hash(key)

    def checksum_matches(self, key: str, sha256: str) -> bool | None:
        """The sha256 of the stored bytes; a link or anything but a plain file is not ours."""
        try:
            return self._hash(key) == sha256
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
            if top.is_symlink():
                continue  # refused by unsafe_root; never followed
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
        try:
            fd, tmp = tempfile.mkstemp(prefix="part-", dir=self._work)
            os.close(fd)
            try:
                write(Path(tmp))
                os.chmod(tmp, 0o644)
                with dirfd.parent_of(self.root, key, create=True) as (parent, name):
                    os.replace(tmp, name, dst_dir_fd=parent)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except dirfd.Refused as exc:
            raise self._refused("write", key, exc) from exc
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
        def link(tmp: Path) -> None:
            tmp.unlink()
            with dirfd.parent_of(self.root, source_key) as (parent, name):
                os.link(name, tmp, src_dir_fd=parent, follow_symlinks=False)

        self._atomic_write(key, link)

    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        self._atomic_write(key, lambda tmp: _write_bytes(tmp, data))

    def _must_open(self, key: str) -> int:
        fd = self._open(key)
        if fd is None:
            missing = FileNotFoundError(errno.ENOENT, "No such file or directory", str(key))
            raise self._error("read", key, missing)
        return fd

    def get_bytes(self, key: str) -> bytes:
        try:
            with os.fdopen(self._must_open(key), "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise self._error("read", key, exc) from exc

    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        def write(part: Path) -> None:
            with os.fdopen(self._must_open(key), "rb") as source, part.open("wb") as out:
                shutil.copyfileobj(source, out)
            progress(part.stat().st_size)

        def attempt(fetch: Callable[[], None]) -> None:
            try:
                fetch()
            except OSError as exc:
                raise self._error("read", key, exc) from exc

        download_via_part(dest, write, attempt)

    def delete(self, key: str) -> None:
        """Remove ``key`` and the directories it leaves empty: an empty model directory in
        ``repository/`` is a model Triton would try (and fail) to load. Every directory is
        reached without following a link, so a planted link is refused, not deleted through."""
        try:
            dirfd.remove(self.root, key)
        except dirfd.Refused as exc:
            raise self._refused("delete", key, exc) from exc
        except OSError as exc:
            raise self._error("delete", key, exc) from exc

    # Conditional writes. A version token is the content's sha256 (a lock record is unique).
    # Create: the record is written whole to a private file, then hard-linked into place, which
    # fails if the name exists (an exclusive create, like O_CREAT|O_EXCL, that no reader sees
    # half-written). Replace: rename the current file away (only one renamer can succeed), check
    # it is the version we were given, then create exclusively; a wrong version is put back.

    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        fd = self._open(key)
        if fd is None:
            return None
        try:
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
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
        try:
            tmp = self._private(data)
            try:
                return self._link_new(key, tmp, data)
            finally:
                tmp.unlink(missing_ok=True)
        except dirfd.Refused as exc:
            raise self._refused("write", key, exc) from exc
        except OSError as exc:
            raise self._error("write", key, exc) from exc

    def _link_new(self, key: str, tmp: Path, data: bytes) -> str | None:
        with dirfd.parent_of(self.root, key, create=True) as (parent, name):
            try:
                os.link(tmp, name, dst_dir_fd=parent, follow_symlinks=False)
            except FileExistsError:
                return None
        return hashlib.sha256(data).hexdigest()

    def _take(self, key: str, token: str) -> Path | None:
        """Move the current version of ``key`` aside if it is ``token``; its new path."""
        assert self._work is not None
        taken = self._work / f"taken-{uuid.uuid4().hex}"
        with dirfd.parent_of(self.root, key) as (parent, name):
            try:
                os.rename(name, taken, src_dir_fd=parent)
            except FileNotFoundError:
                return None  # someone else moved or deleted it first
            if sha256_file(taken) == token:
                return taken
            with contextlib.suppress(FileExistsError):  # not ours to take: put it back
                os.link(taken, name, dst_dir_fd=parent, follow_symlinks=False)
        taken.unlink()
        return None

    def replace_if(self, key: str, data: bytes, token: str) -> str | None:
        try:
            tmp = self._private(data)  # written and synced before the name changes
            try:
                swapped = self._exchange(tmp, key)
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
                self._exchange(tmp, key)  # another version: put it back
                return None
            finally:
                tmp.unlink(missing_ok=True)
        except dirfd.Refused as exc:
            raise self._refused("write", key, exc) from exc
        except OSError as exc:
            raise self._error("write", key, exc) from exc

    def _exchange(self, tmp: Path, key: str) -> bool | None:
        try:
            with dirfd.parent_of(self.root, key) as (parent, name):
                return dirfd.exchange(tmp, parent, name)
        except FileNotFoundError:
            return False

    def delete_if(self, key: str, token: str) -> bool:
        try:
            taken = self._take(key, token)
            if taken is None:
                return False
            taken.unlink()
            return True
        except FileNotFoundError:
            return False
        except dirfd.Refused as exc:
            raise self._refused("delete", key, exc) from exc
        except OSError as exc:
            raise self._error("delete", key, exc) from exc

    def list_sizes(self, prefix: str) -> dict[str, int]:
        """Regular files under ``prefix``; links are never followed nor listed (not ours)."""
        parts = [part for part in prefix.split("/") if part]
        try:
            with dirfd.walk(self.root, parts) as fds:
                return dirfd.sizes(fds[-1], "/".join(parts))
        except (FileNotFoundError, NotADirectoryError):
            return {}
        except dirfd.Refused as exc:
            raise self._refused("list", prefix, exc) from exc


def _write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)
