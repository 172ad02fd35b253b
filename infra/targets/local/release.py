"""A release as the local endpoint reads it: bounded, and checked before any file is touched.

The manifest is read with a size and a nesting limit; every name in it that becomes a path on
this machine (``name``, ``contains``, ``target_model``, ``archive``) must follow the packager's own
rules (``packager/names.py``), as ``tdk package`` writes them, so no manifest can point the
endpoint outside its work directory or at another file of the store. Archives are fetched with
a cap of the manifest's size (``packager/stores/capped.py``), hashed as they arrive.
"""

from __future__ import annotations

from packager.manifest import ARCHIVE_PREFIX, MANIFEST_NAME, Manifest, ManifestModel
from packager.names import name_problem
from packager.stores import Store
from packager.stores.capped import read_manifest as read_bounded
from tdk.errors import UnsafeInputError

REPACKAGE = "re-package the release with `tdk package` (it writes only valid names)"


def read_manifest(store: Store) -> Manifest:
    """The release's manifest, read bounded (``packager.stores.capped.read_manifest``: size and
    nesting limits), every entry's names valid; a TdkError naming the manifest otherwise."""
    manifest = read_bounded(store)
    check_entries(manifest, store.describe(MANIFEST_NAME))
    return manifest


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
