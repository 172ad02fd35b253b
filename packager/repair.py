"""What a republish finds damaged in the store: objects the previous manifest lists whose stored
bytes are not the ones it names (another size, or the store's own checksum disagrees).

Such an object is given the stored size ``DAMAGED``, which no upload has, so the build rebuilds
its copy and the upload replaces it; a corrupted object of the right size is found by its
checksum (a file store: the sha256 of its bytes; S3: ``ChecksumSHA256``; GCS: ``crc32c``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from packager.build import Upload
from packager.digests import FileDigests
from packager.manifest import ARCHIVE_PREFIX, REPOSITORY_PREFIX, Manifest
from packager.stores import Store

DAMAGED = -1  # the stored size recorded for a damaged object: no upload has it


def stored_sizes(
    store: Store, previous: Manifest | None, digests: FileDigests, workers: int
) -> dict[str, int]:
    """Key -> stored size of every object under ``mme/`` and ``repository/`` (one listing
    each), ``DAMAGED`` for every object of ``previous`` that the store holds at another size
    or whose checksum contradicts the manifest's sha256 (asked in ``workers`` parallel calls)."""
    checked = store.list_sizes(ARCHIVE_PREFIX) | store.list_sizes(REPOSITORY_PREFIX)
    if previous is None:
        return checked
    expected: dict[str, str] = {}
    for model in previous.models:
        if model.archive in checked and checked[model.archive] != model.size:
            checked[model.archive] = DAMAGED
        elif model.archive in checked:
            expected[model.archive] = model.sha256
        for rel, sha in model.files.items():
            if REPOSITORY_PREFIX + rel in checked:
                expected[REPOSITORY_PREFIX + rel] = sha

    def damaged(key: str) -> bool:
        return _matches(store, key, expected[key], digests) is False

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for key, bad in zip(expected, pool.map(damaged, expected), strict=True):
            if bad:
                checked[key] = DAMAGED
    return checked


def _matches(store: Store, key: str, sha256: str, digests: FileDigests) -> bool | None:
    """The store's checksum verdict; a local store's bytes are hashed through the stat-keyed
    digest cache (a write changes the file's ctime, so a hit is the same bytes)."""
    root = store.local_root
    if root is None:
        return store.checksum_matches(key, sha256)
    path = root / key
    if path.is_symlink() or not path.is_file():
        return False
    try:
        return digests.sha256(path) == sha256
    except OSError:  # unreadable: it cannot be shown intact, so it is replaced
        return False


def remember_written(
    store: Store, uploads: Iterable[Upload], written: Iterable[str], digests: FileDigests
) -> None:
    """Record in the digest cache the sha256 of each object this publish just wrote to a local
    store (the bytes it hashed), so the next republish's check reads none of them again."""
    root = store.local_root
    if root is None:
        return
    shas = {upload.key: upload.sha256 for upload in uploads}
    for key in written:
        path = root / key
        with contextlib.suppress(OSError, KeyError):
            digests.record(path, shas[key], path.stat())
    digests.save()
