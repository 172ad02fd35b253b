"""Release stores: ``file://``, ``s3://`` and ``gs://`` behind one small contract.

Every object carries its sha256 (S3 and GCS as object metadata, files by content), so a
publisher skips objects that already match and a reader verifies what it fetched.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Callable
from pathlib import Path

from tdk.errors import StoreError

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
