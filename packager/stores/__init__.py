"""Release stores: ``file://``, ``s3://``, ``gs://`` and ``az://`` behind one small contract
(``base``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from packager.stores import azblob, gcs, s3
from packager.stores.base import Progress, Store, StoreKind, sha256_file
from packager.stores.file import FileStore
from tdk.errors import StoreError, UsageError

__all__ = ["FileStore", "Progress", "Store", "open_store", "scheme_list", "sha256_file"]

#: every cloud store, by its URL scheme; each declares itself (``KIND``) in its own module
KINDS: dict[str, StoreKind] = {kind.scheme: kind for kind in (s3.KIND, gcs.KIND, azblob.KIND)}


def scheme_list() -> str:
    """``file://, s3://, ...``: the schemes ``open_store`` takes, for help texts."""
    return ", ".join(f"{scheme}://" for scheme in ("file", *KINDS))


def open_store(url: str, endpoint_url: str | None = None) -> Store:
    """The store for a release URL: ``file://``, a plain path, or a URL of a registered store
    kind (``KINDS``: ``s3://bucket/prefix``, ``gs://bucket/prefix``,
    ``az://account/container/prefix``)."""
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
    kind = KINDS.get(parsed.scheme)
    if kind is None:
        forms = ", ".join(k.form for k in KINDS.values())
        raise StoreError(
            f"{url}: unsupported store scheme {parsed.scheme!r}",
            hint=f"use file:///path or {forms}",
        )
    return kind.open(url, endpoint_url)
