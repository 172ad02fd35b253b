"""What a republish finds damaged in the store: objects the previous manifest lists whose stored
bytes are not the ones it names (another size, or the store's own checksum disagrees).

Such an object is given the stored size ``DAMAGED``, which no upload has, so the build rebuilds
its copy and the upload replaces it; a corrupted object of the right size is found by its
checksum (a file store: the sha256 of its bytes; S3: ``ChecksumSHA256``; GCS: ``crc32c``).

The checksum is read from one listing where it carries it (GCS). Where the listing tags each
object but carries no checksum (S3's ETag), an object whose listed size and tag are those
``stores.record`` kept when tdk wrote it needs no request either; every other object (no
record, another tag: overwritten behind our back) is asked about one by one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from packager.digests import FileDigests
from packager.manifest import ARCHIVE_PREFIX, REPOSITORY_PREFIX, Manifest
from packager.stores import Store
from packager.stores.base import Listed
from packager.stores.record import Recorded, read_record, write_record
from packager.uploads import Upload
from tdk.errors import StoreError

DAMAGED = -1  # the stored size recorded for a damaged object: no upload has it


@dataclass
class StoreCheck:
    """The store as a republish found it."""

    sizes: dict[str, int]  # key -> stored size, DAMAGED for a damaged object
    # Objects shown intact, with their listing tag: by the record alone (its sha256), or by
    # the checksum check of the previous manifest's objects (the manifest's sha256).
    intact: dict[str, Recorded] = field(default_factory=dict)
    record: dict[str, Recorded] = field(default_factory=dict)  # ``stores.record`` as read
    warning: str = ""  # why a record found was set aside


def check_store(
    store: Store, previous: Manifest | None, digests: FileDigests, workers: int
) -> StoreCheck:
    """Key -> stored size of every object under ``mme/`` and ``repository/`` (one listing
    each), ``DAMAGED`` for every object of ``previous`` that the store holds at another size
    or whose checksum contradicts the manifest's sha256 (asked in ``workers`` parallel calls
    where neither the listing nor the record tells)."""
    listed = store.list_objects(ARCHIVE_PREFIX) | store.list_objects(REPOSITORY_PREFIX)
    check = StoreCheck({key: item.size for key, item in listed.items()})
    check.record, check.warning = read_record(store)
    for key, recorded in check.record.items():
        if key in listed and recorded.vouches(listed[key], recorded.sha256):
            check.intact[key] = recorded
    if previous is None:
        return check
    expected: dict[str, str] = {}
    for model in previous.models:
        if model.archive in listed and listed[model.archive].size != model.size:
            check.sizes[model.archive] = DAMAGED
            check.intact.pop(model.archive, None)
        elif model.archive in listed:
            expected[model.archive] = model.sha256
        for rel, sha in model.files.items():
            if REPOSITORY_PREFIX + rel in listed:
                expected[REPOSITORY_PREFIX + rel] = sha

    def verdict(key: str) -> bool | None:
        return _matches(store, key, expected[key], digests, listed[key], check.record.get(key))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for key, matches in zip(expected, pool.map(verdict, expected), strict=True):
            if matches is False:
                check.sizes[key] = DAMAGED
                check.intact.pop(key, None)
            elif matches and listed[key].tag:
                check.intact[key] = Recorded(listed[key].size, listed[key].tag, expected[key])
    return check


def _matches(
    store: Store,
    key: str,
    sha256: str,
    digests: FileDigests,
    listed: Listed,
    recorded: Recorded | None,
) -> bool | None:
    """The store's checksum verdict: from the listing or the record when they tell, else
    asked; a local store's bytes are hashed through the stat-keyed digest cache (a write
    changes the file's ctime, so a hit is the same bytes)."""
    root = store.local_root
    if root is None:
        if listed.verdict is not None:
            return listed.verdict(sha256)
        if recorded is not None and recorded.vouches(listed, sha256):
            return True
        return store.checksum_matches(key, sha256)
    path = root / key
    if path.is_symlink() or not path.is_file():
        return False
    try:
        return digests.sha256(path) == sha256
    except OSError:  # unreadable: it cannot be shown intact, so it is replaced
        return False


def update_record(
    store: Store, check: StoreCheck, uploads: Iterable[Upload], written: Iterable[str]
) -> str:
    """Write the store's record of the release's objects (once the release is complete):
    those this publish wrote, with the tag their write returned, and those it found intact;
    only when it changed. The record only spares later checks, so a failure to write it is
    a warning, returned ("" otherwise)."""
    if not store.tags_in_listing:
        return ""
    tags = store.written_tags()
    fresh = set(written)
    record: dict[str, Recorded] = {}
    for upload in uploads:
        seen = check.intact.get(upload.key)
        if upload.key in fresh and tags.get(upload.key):
            record[upload.key] = Recorded(upload.size, tags[upload.key], upload.sha256)
        elif upload.key not in fresh and seen and seen.sha256 == upload.sha256:
            record[upload.key] = seen
    if record == check.record:
        return ""
    try:
        write_record(store, record)
    except StoreError as exc:
        return f"{exc.message}; the release is complete, its next republish checks each object"
    return ""


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
