"""The objects of a release (``Upload``) and the private snapshots of input files they are
published from: the store gets exactly the bytes whose sha256 the manifest names, never bytes
read again from a live input that may have changed since it was hashed.

A snapshot is taken while the input is read to archive it (``ArchiveWriter`` tees the bytes it
hashes into the stage: one read), or, for an input no archive of this run read, by one read
that hashes while it copies.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from packager.archive import Taken
from packager.digests import FileDigests
from tdk.errors import UnsafeInputError

SNAPSHOT_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Upload:
    """One object of the release: a staged file or in-memory bytes, and its sha256."""

    key: str
    sha256: str
    size: int
    path: Path | None = None
    data: bytes | None = None
    move: bool = False
    live: bool = False  # ``path`` is an input file: upload a snapshot checked against sha256


def snapshot(upload: Upload, stage: Path) -> Path:
    """A private copy of the live input ``upload.path`` in ``stage`` whose bytes hash to
    ``upload.sha256`` (what the manifest says), so the store gets exactly the hashed bytes.

    UnsafeInputError when the input changed since it was hashed."""
    assert upload.path is not None
    digest = hashlib.sha256()
    handle, name = tempfile.mkstemp(prefix="snap-", dir=stage)
    with upload.path.open("rb") as src, os.fdopen(handle, "wb") as dst:
        while chunk := src.read(SNAPSHOT_CHUNK):
            digest.update(chunk)
            dst.write(chunk)
    if digest.hexdigest() != upload.sha256:
        Path(name).unlink()
        raise UnsafeInputError(
            f"{upload.path} changed while it was being packaged (its sha256 is no longer the "
            "one in the archive and the manifest); nothing more is published",
            hint="do not modify the repository while `tdk package` runs, then publish again",
        )
    return Path(name)


class StaleDigest(UnsafeInputError):
    """The digest cache gave a sha256 that ``path``'s bytes do not have (the entry was edited
    or damaged): the entry is dropped, and the release is built again from the bytes."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"the digest cache's sha256 of {path} disagrees with its bytes (an edited cache); "
            "the entry was dropped",
            hint="publish again: the file is hashed from its bytes",
        )
        self.path = path


def snapshot_all(
    uploads: list[Upload],
    stage: Path,
    digests: FileDigests,
    taken: Mapping[Path, Taken] | None = None,
) -> list[Upload]:
    """``uploads`` with each live input replaced by its private snapshot, before the store
    changes: the copy ``taken`` while the input was read to archive it (one read), when the
    input is unchanged since and its bytes had the upload's sha256; else one read now. A
    snapshot whose bytes are not the sha256 the digest cache gave raises StaleDigest (the entry
    forgotten), so the caller can rebuild with nothing published.

    An input that several copies share (the same file, the same sha256) is snapshotted once:
    the store gets it once and copies it inside itself for the other copies."""
    wanted = {(u.path, u.sha256): u for u in reversed(uploads) if u.live}
    teed = taken or {}

    def take(upload: Upload) -> Path:
        assert upload.path is not None
        early = teed.get(upload.path)
        if early is not None and early.fits(upload.path, upload.sha256):
            return early.copy
        try:
            return snapshot(upload, stage)
        except UnsafeInputError:
            if not digests.from_cache(upload.path):
                raise
            digests.forget(upload.path)
            raise StaleDigest(upload.path) from None

    with ThreadPoolExecutor(max_workers=4) as pool:
        staged = dict(zip(wanted, pool.map(take, wanted.values()), strict=True))
    done: set[Path] = set()

    def staged_copy(upload: Upload) -> Upload:
        if not upload.live:
            return upload
        path = staged[(upload.path, upload.sha256)]
        first = path not in done  # the first moves the snapshot into the store; the rest copy
        done.add(path)
        return replace(upload, path=path, live=False, move=first)

    return [staged_copy(u) for u in uploads]
