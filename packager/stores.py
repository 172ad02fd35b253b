"""Release stores: ``file://``, ``s3://`` and ``gs://`` behind one small contract.

Every object carries its sha256 (S3 and GCS as object metadata, files by content), so a
publisher skips objects that already match and a reader verifies what it fetched.
"""

from __future__ import annotations

import abc
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from packager.archive import copy_range
from packager.errors import StoreError

Progress = Callable[[int], None]
CHUNK = 8 * 1024 * 1024


def _noop(_: int) -> None:
    return None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


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
    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        """Upload ``path`` to ``key`` with its sha256; the object appears whole or not at all.

        ``move`` says the caller no longer needs ``path``: a store may rename it into place.
        """

    def staging_root(self) -> Path | None:
        """Where to build files that will be put here (same filesystem for FileStore)."""
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

    @abc.abstractmethod
    def list_keys(self, prefix: str) -> list[str]:
        """Keys under ``prefix`` (relative to the release root), sorted."""

    def _error(self, action: str, key: str, exc: BaseException) -> StoreError:
        return StoreError(
            f"cannot {action} {self.describe(key)}: {exc.__class__.__name__}: {exc}",
            hint="check the store URL, that it is reachable, and your credentials",
        )


class FileStore(Store):
    """A directory on this machine (``file:///abs/path`` or a plain path)."""

    def __init__(self, url: str, root: Path) -> None:
        super().__init__(url)
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def sha256_of(self, key: str) -> str | None:
        path = self._path(key)
        return sha256_file(path) if path.is_file() else None

    def _atomic_write(self, key: str, write: Callable[[Path], None]) -> None:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tdk-", dir=target.parent)
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

    def staging_root(self) -> Path | None:
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root

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
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise self._error("delete", key, exc) from exc

    def list_keys(self, prefix: str) -> list[str]:
        base = self._path(prefix)
        if not base.is_dir():
            return []
        found = (p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".tdk-"))
        return sorted(p.relative_to(self.root).as_posix() for p in found)


def _write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def open_store(url: str, endpoint_url: str | None = None) -> Store:
    """The store for a release URL: ``file://``, a plain path, ``s3://bucket/prefix`` or ``gs://``."""
    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        path = Path(parsed.path if parsed.scheme == "file" else url).expanduser().resolve()
        if parsed.scheme == "file" and parsed.netloc not in ("", "localhost"):
            raise StoreError(f"{url}: file:// URLs name a local path", hint="use file:///abs/path")
        return FileStore(f"file://{path}", path)
    if parsed.scheme == "s3":
        from packager.store_s3 import S3Store

        return S3Store(url, parsed.netloc, parsed.path.strip("/"), endpoint_url=endpoint_url)
    if parsed.scheme == "gs":
        from packager.store_gcs import GcsStore

        return GcsStore(url, parsed.netloc, parsed.path.strip("/"))
    raise StoreError(
        f"{url}: unsupported store scheme {parsed.scheme!r}",
        hint="use file:///path, s3://bucket/prefix or gs://bucket/prefix",
    )
