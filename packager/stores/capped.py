"""Reading a store object with a cap: a hostile store cannot make a reader copy more bytes than
it expects (a manifest's limit, an archive's size in its manifest). ``read_manifest`` is the
one way tdk reads a release's manifest from a store."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from packager.manifest import MANIFEST_MAX_BYTES, MANIFEST_NAME, RELEASE_HINT, Manifest
from packager.stores.base import Store, part_path
from tdk.bounded import open_regular
from tdk.errors import StoreError, TdkError

CHUNK = 1024 * 1024


class TooLarge(TdkError):
    """A store object is larger than it may be."""


def read_manifest(store: Store) -> Manifest:
    """The release's manifest from ``store``, fetched with a cap of MANIFEST_MAX_BYTES and
    parsed bounded; a TdkError naming the manifest otherwise."""
    source = store.describe(MANIFEST_NAME)
    with tempfile.TemporaryDirectory(prefix="tdk-manifest-") as folder:
        path = Path(folder) / MANIFEST_NAME
        size, _ = fetch_capped(store, MANIFEST_NAME, path, MANIFEST_MAX_BYTES)
        raw = b"" if size > MANIFEST_MAX_BYTES else path.read_bytes()
    if size > MANIFEST_MAX_BYTES:
        raise TooLarge(
            f"{source} is larger than {MANIFEST_MAX_BYTES} bytes; not a tdk manifest",
            hint=RELEASE_HINT,
        )
    return Manifest.from_json(raw, source)


def fetch_capped(store: Store, key: str, dest: Path, limit: int) -> tuple[int, str]:
    """Fetch ``key`` into ``dest``, at most ``limit + 1`` bytes; its (size, sha256). A size
    over ``limit`` means the object is larger (its sha256 is then "").

    A file store's object is read here chunk by chunk, only when it is a regular file (a FIFO
    would block the open forever, a link to ``/dev/zero`` never end); other stores download
    into ``dest``, stopped as soon as they report more than ``limit`` bytes.
    On any failure ``dest`` and the store's ``.part`` file are removed.
    """
    part = part_path(dest)
    try:
        root = store.local_root
        if root is not None:
            return _copy_file(store, root / key, key, dest, limit)
        try:
            store.download(key, dest, _Cap(store, key, limit))
        except TooLarge:
            return limit + 1, ""
        return _hash(dest, limit)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    finally:
        part.unlink(missing_ok=True)


class _Cap:
    """A download's progress callback that stops it past ``limit`` bytes."""

    def __init__(self, store: Store, key: str, limit: int) -> None:
        self.what = store.describe(key)
        self.limit = limit
        self.received = 0

    def __call__(self, count: int) -> None:
        self.received += count
        if self.received > self.limit:
            raise TooLarge(f"{self.what} is larger than {self.limit} bytes")


def _copy_file(store: Store, path: Path, key: str, dest: Path, limit: int) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    try:
        with os.fdopen(open_regular(path), "rb") as source, dest.open("wb") as out:
            while size <= limit and (chunk := source.read(min(CHUNK, limit + 1 - size))):
                size += len(chunk)
                digest.update(chunk)
                out.write(chunk)
    except OSError as exc:
        if exc.filename == str(dest):
            raise
        raise StoreError(
            f"cannot read {store.describe(key)}: {exc.strerror or exc}",
            hint="check the store URL and that the release is complete",
        ) from exc
    return size, digest.hexdigest()


def _hash(path: Path, limit: int) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as source:
        while size <= limit and (chunk := source.read(min(CHUNK, limit + 1 - size))):
            size += len(chunk)
            digest.update(chunk)
    return size, digest.hexdigest()


def read_capped(store: Store, key: str, limit: int) -> bytes | None:
    """``key``'s bytes with one request, at most ``limit`` of them read; None when absent.
    TooLarge (nothing kept) when the object holds more than ``limit`` bytes."""
    data = store.read_prefix(key, limit + 1)
    if data is not None and len(data) > limit:
        raise TooLarge(f"{store.describe(key)} is larger than {limit} bytes")
    return data
