"""Release stores: ``file://``, ``s3://``, ``gs://`` and ``az://`` behind one small contract
(``base``)."""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import urlparse

from packager.stores import azblob, gcs, s3
from packager.stores.base import Progress, Store, StoreKind, sha256_file
from packager.stores.file import FileStore
from tdk.errors import StoreError, UsageError
from tdk.redact import has_userinfo, redact

__all__ = [
    "FileStore",
    "Progress",
    "Store",
    "absolute_url",
    "local_path",
    "open_store",
    "scheme_list",
    "sha256_file",
]

#: every cloud store, by its URL scheme; each declares itself (``KIND``) in its own module
KINDS: dict[str, StoreKind] = {kind.scheme: kind for kind in (s3.KIND, gcs.KIND, azblob.KIND)}


def scheme_list() -> str:
    """``file://, s3://, ...``: the schemes ``open_store`` takes, for help texts."""
    return ", ".join(f"{scheme}://" for scheme in ("file", *KINDS))


def local_path(url: str) -> Path | None:
    """The absolute directory a ``file://`` URL or plain path names, resolved against the
    directory this process runs in; None for a registered store kind's URL."""
    parsed = urlparse(url)
    if parsed.scheme not in ("", "file"):
        return None
    if parsed.scheme == "file" and parsed.netloc not in ("", "localhost"):
        raise StoreError(
            f"{url}: file:// URLs name an absolute path (file:///abs/path)",
            hint=f"give a plain path instead: {shlex.quote(parsed.netloc + parsed.path)}",
        )
    raw = parsed.path if parsed.scheme == "file" else url
    if not raw.strip():
        # An unset shell variable (file://$DEST) would otherwise mean the current directory.
        raise UsageError(
            f"the store URL {url!r} names no directory",
            hint="give a path: file:///abs/path (is a shell variable in it unset?)",
        )
    return Path(raw).expanduser().resolve()


def absolute_url(url: str) -> str:
    """``url`` with a local path made absolute (a plain path stays a path, ``file://`` a
    ``file://`` URL), so that it means the same in a process started elsewhere (the local
    endpoint's server); other URLs unchanged."""
    path = local_path(url)
    if path is None:
        return url
    return f"file://{path}" if urlparse(url).scheme == "file" else str(path)


def open_store(url: str, endpoint_url: str | None = None) -> Store:
    """The store for a release URL: ``file://``, a plain path (against the current directory),
    or a URL of a registered store kind (``KINDS``: ``s3://bucket/prefix``,
    ``gs://bucket/prefix``, ``az://account/container/prefix``)."""
    if has_userinfo(url) or has_userinfo(endpoint_url or ""):
        raise StoreError(
            f"{redact(url)}{' at ' + redact(endpoint_url) if endpoint_url else ''}: a store "
            "URL or endpoint carries no credentials (they would be echoed in "
            "messages, logs and process lists)",
            hint="remove the user:password@ part; give credentials as the store's own client "
            "reads them (environment, profile, workload identity)",
        )
    path = local_path(url)
    if path is not None:
        return FileStore(f"file://{path}", path)
    parsed = urlparse(url)
    kind = KINDS.get(parsed.scheme)
    if kind is None:
        forms = ", ".join(k.form for k in KINDS.values())
        raise StoreError(
            f"{url}: unsupported store scheme {parsed.scheme!r}",
            hint=f"use file:///path or {forms}",
        )
    return kind.open(url, endpoint_url)
