"""A release as the local endpoint reads it: bounded, and checked before any file is touched.

The manifest is read with a size and a nesting limit; every name in it that becomes a path on
this machine (``name``, ``contains``, ``target_model``, ``archive``) must follow the packager's own
rules (``packager/names.py``), as ``tdk package`` writes them, so no manifest can point the
endpoint outside its work directory or at another file of the store. Archives are fetched with
a cap of the manifest's size (plus one byte, to tell "larger"), hashed as they arrive.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path

from packager.manifest import ARCHIVE_PREFIX, MANIFEST_NAME, Manifest, ManifestModel
from packager.names import name_problem
from packager.stores import Store
from tdk.errors import StoreError, TdkError, UnsafeInputError

MANIFEST_MAX_BYTES = 64 * 1024 * 1024  # a release of 10,000 copies is a few MB
JSON_MAX_DEPTH = 32  # a manifest nests 5 deep (models, a model, inputs, a spec, dims)
CHUNK = 1024 * 1024
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = b"[{"
REPACKAGE = "re-package the release with `tdk package` (it writes only valid names)"


class TooLarge(TdkError):
    """A store object is larger than it may be."""


def read_manifest(store: Store) -> Manifest:
    """The release's manifest: at most MANIFEST_MAX_BYTES, nested at most JSON_MAX_DEPTH deep,
    every entry's names valid; a TdkError naming the manifest otherwise."""
    source = store.describe(MANIFEST_NAME)
    with tempfile.TemporaryDirectory(prefix="tdk-manifest-") as folder:
        path = Path(folder) / MANIFEST_NAME
        size, _ = fetch_capped(store, MANIFEST_NAME, path, MANIFEST_MAX_BYTES)
        raw = b"" if size > MANIFEST_MAX_BYTES else path.read_bytes()
    if size > MANIFEST_MAX_BYTES:
        raise TooLarge(
            f"{source} is larger than {MANIFEST_MAX_BYTES} bytes; not a tdk manifest",
            hint="point --store at a release written by `tdk package --dest`",
        )
    if json_depth(raw) > JSON_MAX_DEPTH:
        raise TdkError(
            f"{source}: JSON nested more than {JSON_MAX_DEPTH} deep (a manifest nests 5 deep)",
            hint="point --store at a release written by `tdk package --dest`",
        )
    manifest = Manifest.from_json(raw, source)
    check_entries(manifest, source)
    return manifest


def json_depth(raw: bytes, limit: int = JSON_MAX_DEPTH) -> int:
    """How deep ``raw``'s arrays and objects nest (strings skipped), without parsing it; the
    count stops once past ``limit`` (a hostile manifest is all brackets)."""
    depth = deepest = 0
    for byte in _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS):
        depth += 1 if byte in _OPENING else -1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest


def _entry_problem(entry: ManifestModel, seen: set[str]) -> str | None:
    for field, value in (("name", entry.name), *(("contains", n) for n in entry.contains)):
        if not isinstance(value, str):
            return f"{field} {value!r} is not a string"
        problem = name_problem(value)
        if problem:
            return f"{field} {value[:80]!r} {problem}"
    if entry.contains and entry.contains[-1] != entry.name:
        return f"contains {list(entry.contains)[:5]!r} does not end with the served {entry.name!r}"
    if entry.target_model != f"{entry.name}.tar.gz":
        return f"target_model {entry.target_model[:80]!r} is not {entry.name!r} + '.tar.gz'"
    left_out = not entry.archive and bool(entry.mme_left_out)  # decoupled: repository/ only
    if not left_out and entry.archive != f"{ARCHIVE_PREFIX}{entry.target_model}":
        return f"archive {entry.archive[:80]!r} is not '{ARCHIVE_PREFIX}{entry.target_model}'"
    if entry.name in seen:
        return f"name {entry.name!r} appears twice"
    if not isinstance(entry.size, int) or entry.size < 0 or isinstance(entry.size, bool):
        return f"size {entry.size!r} is not a number of bytes"
    return None


def check_entries(manifest: Manifest, source: str) -> None:
    """Every entry's names as the packager writes them; UnsafeInputError names the first bad."""
    seen: set[str] = set()
    for index, entry in enumerate(manifest.models):
        problem = _entry_problem(entry, seen)
        if problem:
            raise UnsafeInputError(f"{source}: models[{index}]: {problem}", hint=REPACKAGE)
        seen.add(entry.name)


def fetch_capped(store: Store, key: str, dest: Path, limit: int) -> tuple[int, str]:
    """Fetch ``key`` into ``dest``, at most ``limit + 1`` bytes; its (size, sha256). A size
    over ``limit`` means the object is larger (its sha256 is then "").

    A file store's object is read here chunk by chunk (a link to ``/dev/zero`` stops at
    ``limit + 1``); other stores download into ``dest``, stopped as soon as they report more
    than ``limit`` bytes. On any failure ``dest`` and the store's ``.part`` file are removed.
    """
    part = dest.with_name(dest.name + ".part")
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
        with path.open("rb") as source, dest.open("wb") as out:
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
