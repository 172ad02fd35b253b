"""A release as the local endpoint reads it: bounded, and checked before any file is touched.

The manifest is read with a size and a nesting limit; every name in it that becomes a path on
this machine (``name``, ``contains``, ``target_model``, ``archive``) must follow the packager's own
rules (``packager/names.py``), as ``tdk package`` writes them, so no manifest can point the
endpoint outside its work directory or at another file of the store. Archives are fetched with
a cap of the manifest's size (``packager/stores/capped.py``), hashed as they arrive. A copy
published without an archive (decoupled) is served from its ``repository/`` files: each path in
its ``files`` must be relative, inside the copy's model directories, without ``..``, empty, ``.``
or unreadable components (``packager/archive.py``'s file-name rules), each digest a sha256.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import stat
import threading

from packager.inputs import name_problem as file_name_problem
from packager.manifest import ARCHIVE_PREFIX, MANIFEST_NAME, Manifest, ManifestModel
from packager.names import name_problem
from packager.stores import Store
from packager.stores.capped import read_manifest as read_bounded
from tdk.errors import UnsafeInputError

REPACKAGE = "re-package the release with `tdk package` (it writes only valid names)"
SHA256 = re.compile(r"[0-9a-f]{64}")


def read_manifest(store: Store) -> Manifest:
    """The release's manifest, read bounded (``packager.stores.capped.read_manifest``: size and
    nesting limits), every entry's names valid; a TdkError naming the manifest otherwise."""
    _check_regular(store)
    manifest = read_bounded(store)
    check_entries(manifest, store.describe(MANIFEST_NAME))
    return manifest


async def read_manifest_abandonable(store: Store) -> Manifest:
    """``read_manifest`` on a daemon thread: a read that blocks (a stalled store) can be
    abandoned when the endpoint is told to stop while starting; the process still exits."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Manifest] = loop.create_future()

    def settle(result: Manifest | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        elif result is not None:
            future.set_result(result)

    def work() -> None:
        result: Manifest | None = None
        error: BaseException | None = None
        try:
            result = read_manifest(store)
        except BaseException as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, daemon=True, name="tdk-read-manifest").start()
    return await future


def _check_regular(store: Store) -> None:
    """A file store's manifest must be a regular file: a FIFO would block its reader for ever
    (and the endpoint's start with it), a device would never end. Checked before any open."""
    root = store.local_root
    if root is None:
        return
    try:
        mode = (root / MANIFEST_NAME).stat().st_mode
    except OSError:
        return  # missing or unreadable: the reader says so
    if not stat.S_ISREG(mode):
        raise UnsafeInputError(
            f"{store.describe(MANIFEST_NAME)} is not a regular file (a FIFO, a device or a "
            "directory); refused before reading",
            hint=REPACKAGE,
        )


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
    if left_out:
        problem = files_problem(entry)
        if problem:
            return problem
    if entry.name in seen:
        return f"name {entry.name!r} appears twice"
    if not isinstance(entry.size, int) or entry.size < 0 or isinstance(entry.size, bool):
        return f"size {entry.size!r} is not a number of bytes"
    return None


def path_problem(rel: object, allowed: tuple[str, ...]) -> str | None:
    """Why ``rel`` (a ``files`` key) cannot be written under the model directories ``allowed``
    (the copy's ``contains``, or its name), or None."""
    if not isinstance(rel, str):
        return f"{rel!r} is not a string"
    shown = repr(rel[:120])
    parts = rel.split("/")
    if rel.startswith("/") or any(part in ("", ".", "..") for part in parts):
        return f"{shown} is not a relative path without '..', '.' or empty parts"
    problem = next((p for part in parts if (p := file_name_problem(part))), None)
    if problem:
        return f"{shown} {problem}"
    if len(parts) < 2 or parts[0] not in allowed:
        return f"{shown} is not a file inside the model directories {sorted(allowed)[:5]!r}"
    return None


def files_problem(entry: ManifestModel) -> str | None:
    """Why the copy's ``files`` (relative path -> sha256) cannot be served, or None."""
    if not isinstance(entry.files, dict) or not entry.files:
        return "files is empty: a copy without an archive is served from its repository/ files"
    allowed = entry.contains if entry.contains else (entry.name,)
    for rel, digest in entry.files.items():
        problem = path_problem(rel, allowed)
        if problem:
            return f"files: {problem}"
        if not isinstance(digest, str) or not SHA256.fullmatch(digest):
            return f"files: {rel[:120]!r}: {str(digest)[:80]!r} is not a sha256"
    return None


def check_entries(manifest: Manifest, source: str) -> None:
    """Every entry's names as the packager writes them; UnsafeInputError names the first bad."""
    seen: set[str] = set()
    for index, entry in enumerate(manifest.models):
        problem = _entry_problem(entry, seen)
        if problem:
            raise UnsafeInputError(f"{source}: models[{index}]: {problem}", hint=REPACKAGE)
        seen.add(entry.name)
