"""Release stores: ``file://``, ``s3://``, ``gs://`` and ``az://`` behind one small contract
(``base``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from packager.stores.base import Progress, Store, sha256_file
from packager.stores.file import FileStore
from tdk.errors import StoreError, UsageError

__all__ = ["FileStore", "Progress", "Store", "open_store", "sha256_file"]


def open_store(url: str, endpoint_url: str | None = None) -> Store:
    """The store for a release URL: ``file://``, a plain path, ``s3://bucket/prefix``,
    ``gs://bucket/prefix`` or ``az://account/container/prefix``."""
    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        if parsed.scheme == "file" and parsed.netloc not in ("", "localhost"):
            raise StoreError(f"{url}: file:// URLs name a local path", hint="use file:///abs/path")
        raw = parsed.path if parsed.scheme == "file" else url
        if not raw.strip():
            # An unset shell variable (file://$DEST) would otherwise mean the current directory.
            raise UsageError(
                f"the store URL {url!r} names no directory",
                hint="give a path: file:///abs/path (is a shell variable in it unset?)",
            )
        path = Path(raw).expanduser().resolve()
        return FileStore(f"file://{path}", path)
    if parsed.scheme in ("s3", "gs") and not parsed.netloc:
        raise UsageError(
            f"the store URL {url!r} names no bucket",
            hint=f"use {parsed.scheme}://bucket/prefix (is a shell variable in it unset?)",
        )
    if parsed.scheme == "s3":
        from packager.stores.s3 import S3Store

        return S3Store(url, parsed.netloc, parsed.path.strip("/"), endpoint_url=endpoint_url)
    if parsed.scheme == "gs":
        from packager.stores.gcs import GcsStore

        return GcsStore(url, parsed.netloc, parsed.path.strip("/"))
    if parsed.scheme == "az":
        from packager.stores.azaccount import parse_url
        from packager.stores.azblob import AzStore

        return AzStore(url, *parse_url(url))
    raise StoreError(
        f"{url}: unsupported store scheme {parsed.scheme!r}",
        hint="use file:///path, s3://bucket/prefix, gs://bucket/prefix or "
        "az://account/container/prefix",
    )
