"""Release stores: ``file://``, ``s3://``, ``gs://`` and ``az://`` behind one small contract.

Every object carries its sha256 (S3, GCS and Azure as object metadata, files by content), so a
publisher skips objects that already match and a reader verifies what it fetched.
"""

from __future__ import annotations

import abc
import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from packager.userdirs import staging_root
from tdk import numbers
from tdk.errors import ConfigError, StoreError

Progress = Callable[[int], None]
CHUNK = 8 * 1024 * 1024
STAGING_PREFIX = "tdk-staging-"  # a publish's private work dir, locked while it runs


_Number = TypeVar("_Number", int, float)


def _noop(_: int) -> None:
    return None


MAX_WAIT = 24 * 3600.0  # a store timeout beyond a day is a typo (and 1e300 s overflows a socket)


def env_number(
    name: str, kind: type[_Number], default: _Number, least: _Number, most: float | None = None
) -> _Number:
    """A store client's network limit from the environment variable ``name`` (``default``
    when unset); a ConfigError naming the variable when it is not a finite number from
    ``least`` to ``most`` (a float: at most MAX_WAIT) written in ASCII digits
    (``tdk.numbers``: ``nan``, ``0_1`` and other scripts' digits are refused)."""
    high = most if most is not None else (MAX_WAIT if kind is float else None)
    value = numbers.env_number(name, default, least, high, integer=kind is int, error=ConfigError)
    return kind(value)


@dataclass(frozen=True)
class Listed:
    """One object as a single listing of the store shows it."""

    size: int
    # The listing's token of the stored bytes (S3's ETag), which another write of other bytes
    # changes; "" when the listing carries none.
    tag: str = ""
    # The store's own checksum verdict (``Store.checksum_matches``) for a sha256, when the
    # listing itself carries that checksum (GCS's ``crc32c`` and metadata); else None.
    verdict: Callable[[str], bool | None] | None = None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def part_path(dest: Path) -> Path:
    """Where a download into ``dest`` is written until it is whole (``<name>.part`` beside it)."""
    return dest.with_name(dest.name + ".part")


def download_via_part(
    dest: Path, write: Callable[[Path], None], attempt: Callable[[Callable[[], None]], object]
) -> None:
    """Download into ``dest``: ``write(part)`` fills part_path(dest), which replaces ``dest``
    only once whole, so a cut download never leaves a partial ``dest``. ``attempt`` runs that
    step (the store's error mapping); the part file never outlives the call."""
    part = part_path(dest)

    def fetch() -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        write(part)
        os.replace(part, dest)

    try:
        attempt(fetch)
    finally:
        part.unlink(missing_ok=True)


class Store(abc.ABC):
    """A release root; keys are ``/``-separated paths relative to it (``mme/bert-0.tar.gz``)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def describe(self, key: str) -> str:
        return f"{self.url}/{key}"

    @abc.abstractmethod
    def sha256_of(self, key: str) -> str | None:
        """The sha256 of the object at ``key``, or None when there is none."""

    @abc.abstractmethod
    def checksum_matches(self, key: str, sha256: str) -> bool | None:
        """Whether the object at ``key`` holds the bytes whose sha256 is ``sha256``, as the
        store's own checksum of what it stores tells: False when that checksum contradicts it
        or the object is not one tdk wrote (a damaged or replaced object, to be rebuilt); None
        when the store keeps no checksum that can tell (only the size is then checked)."""

    @abc.abstractmethod
    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        """Upload ``path`` to ``key`` with its sha256; the object appears whole or not at all.

        ``move`` says the caller no longer needs ``path``: a store may rename it into place.
        """

    @contextmanager
    def staging(self) -> Iterator[Path]:
        """A private directory to build the release in, removed at the end.

        It is locked while in use, so ``clean_leftovers`` of a later publish removes it only
        once its process is gone (killed or crashed). Cloud stores build in this user's private
        cache directory (``userdirs.staging_root``), never in a directory others can enter.
        """
        with locked_workdir(staging_root(), self.url) as path:
            yield path

    def clean_leftovers(self, owned: set[str]) -> list[str]:
        """Remove what an interrupted publish of ours left (never anything else); ``owned``
        is every key a tdk release wrote here. Returns what was removed."""
        return remove_unlocked(staging_root())

    def unsafe_root(self, prune: bool) -> str | None:
        """Why this release root must not be published to (with ``prune``), or None."""
        return None

    @property
    def root_parts(self) -> list[str]:
        """The release root's place in its namespace (directories, or the bucket's prefix)."""
        return []

    def exists_at(self, parts: list[str]) -> bool:
        """Whether an object exists at ``parts`` of this store's namespace (outside the root)."""
        return False

    @property
    def local_root(self) -> Path | None:
        """The directory on this machine the release lives in (``file://``), else None."""
        return None

    @abc.abstractmethod
    def copy(self, source_key: str, key: str, sha256: str) -> None:
        """Make ``key`` a copy of ``source_key`` (whose sha256 is given) inside the store."""

    @abc.abstractmethod
    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        """Write a small object whole (the manifest)."""

    @abc.abstractmethod
    def get_bytes(self, key: str) -> bytes:
        """Read a small object; StoreError naming the store when absent or unreachable."""

    @abc.abstractmethod
    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        """Fetch ``key`` into ``dest`` (written to a temporary name, then renamed)."""

    @abc.abstractmethod
    def delete(self, key: str) -> None:
        """Remove ``key``; absent is fine."""

    def list_keys(self, prefix: str) -> list[str]:
        """Keys under ``prefix`` (relative to the release root), sorted."""
        return sorted(self.list_sizes(prefix))

    @abc.abstractmethod
    def list_sizes(self, prefix: str) -> dict[str, int]:
        """Key -> stored size in bytes of every object under ``prefix``, from one listing."""

    def list_objects(self, prefix: str) -> dict[str, Listed]:
        """Key -> what one listing shows of every object under ``prefix``."""
        return {key: Listed(size) for key, size in self.list_sizes(prefix).items()}

    # A store whose listing tags the stored bytes but carries no checksum (S3: ETag and size
    # only) keeps a record of what tdk wrote (``stores.record``), so a republish compares one
    # listing with it instead of asking about each object.
    tags_in_listing = False

    def written_tags(self) -> dict[str, str]:
        """Key -> the listing tag of each object this store object wrote, as the write's own
        response named it (S3: the ETag of PutObject, CopyObject, CompleteMultipartUpload)."""
        return {}

    def read_prefix(self, key: str, limit: int) -> bytes | None:
        """At most ``limit`` bytes from the start of ``key``, with one request; None when
        there is no such object (or the store cannot read one this way)."""
        return None

    # Conditional writes, for the publish lock: a token names one version of an object (S3
    # ETag, GCS generation, a file's content digest), and a write conditioned on it fails once
    # anyone else has replaced that version, so two writers can never both win.

    @abc.abstractmethod
    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and version token, or None when there is none."""

    @abc.abstractmethod
    def create_exclusive(self, key: str, data: bytes) -> str | None:
        """Create ``key`` only if absent; its version token, or None when it exists."""

    @abc.abstractmethod
    def replace_if(self, key: str, data: bytes, token: str) -> str | None:
        """Replace ``key`` only if still at version ``token``; the new token, or None."""

    @abc.abstractmethod
    def delete_if(self, key: str, token: str) -> bool:
        """Delete ``key`` only if still at version ``token``; whether it was deleted."""

    def _error(self, action: str, key: str, exc: BaseException) -> StoreError:
        if isinstance(exc, OSError) and exc.errno in _HINTS:
            return StoreError(
                f"cannot {action} {self.describe(key)}: {exc.strerror} ({exc.filename})",
                hint=_HINTS[exc.errno],
            )
        return StoreError(
            f"cannot {action} {self.describe(key)}: {exc.__class__.__name__}: {exc}",
            hint="check the store URL, that it is reachable, and your credentials",
        )


_HINTS = {
    errno.EACCES: "choose a destination you can write to, or fix its permissions",
    errno.EPERM: "choose a destination you can write to, or fix its permissions",
    errno.EROFS: "the filesystem is read-only: choose another destination",
    errno.ENOTDIR: "a part of the destination path is a file: choose a directory",
    errno.EEXIST: "the destination is a file: choose a directory",
    errno.ENOSPC: "the disk is full: free space or choose another destination",
}


@contextmanager
def locked_workdir(parent: Path, owner: str) -> Iterator[Path]:
    """A fresh ``parent/tdk-staging-*`` directory holding an exclusive ``flock`` until exit.

    The lock dies with the process, so a directory whose lock can be taken is a leftover.
    """
    path, fd = _locked_new_workdir(parent, owner)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)
        with contextlib.suppress(OSError):
            parent.rmdir()  # only when empty: no other publish is running there


def _locked_new_workdir(parent: Path, owner: str) -> tuple[Path, int]:
    # Another publish's ``remove_unlocked`` may lock and remove the directory between its
    # creation and our lock: the lock waits for that removal to end, then we start again.
    for _ in range(3):
        path = _make_workdir(parent, owner)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        if path.is_dir():
            return path, fd
        os.close(fd)
    raise StoreError(f"cannot create a staging directory in {parent}", hint="retry the publish")


def _make_workdir(parent: Path, owner: str) -> Path:
    for attempt in range(3):  # another publish may remove ``parent`` between mkdir and mkdtemp
        try:
            parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            return Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=parent))
        except FileNotFoundError:
            if attempt < 2:
                continue
            raise StoreError(
                f"cannot write to {owner}: {parent} cannot be created",
                hint="check the destination path: a directory in it cannot be created there",
            ) from None
        except OSError as exc:
            raise StoreError(
                f"cannot write to {owner}: {exc.strerror} ({exc.filename or parent})",
                hint=_HINTS.get(exc.errno or 0, "choose a directory you can write to"),
            ) from exc
    raise AssertionError("unreachable")


def remove_unlocked(parent: Path) -> list[str]:
    """Remove the ``tdk-staging-*`` directories under ``parent`` whose process is gone."""
    removed: list[str] = []
    if not parent.is_dir():
        return removed
    for path in sorted(parent.glob(STAGING_PREFIX + "*")):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a running publish holds it
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
        finally:
            os.close(fd)
    return removed


@dataclass(frozen=True)
class StoreKind:
    """One kind of release store, declared in its own module (``KIND``) and registered by its
    URL scheme in ``packager.stores``: the scheme, the URL's form (for hints) and how a URL of
    it opens (``endpoint_url`` is the ``--endpoint-url`` of an S3-compatible store; others
    ignore it)."""

    scheme: str
    form: str
    open: Callable[[str, str | None], Store]


def require_bucket(url: str, netloc: str, form: str) -> str:
    """The URL's bucket (its host part); a UsageError when empty (an unset shell variable)."""
    if not netloc:
        from tdk.errors import UsageError

        raise UsageError(
            f"the store URL {url!r} names no bucket",
            hint=f"use {form} (is a shell variable in it unset?)",
        )
    return netloc
