"""``tdk-objects.json``: what tdk itself wrote to a store whose listing tags each object's bytes
but carries no checksum of them (S3: ETag and size only, see ``stores.s3tags``).

For each object of the release it keeps the size, the listing tag the write's own response
named, and the sha256 of the bytes written. A republish then compares ONE listing with it:
an object whose listed size and tag are the recorded ones, recorded with the sha256 the
manifest names, holds the bytes tdk wrote; any other (overwritten behind our back, missing
from the record) is asked about as before. The record is advisory: missing, too large,
malformed or hostile, it is set aside with a warning and every object is asked about.
Anyone who can rewrite it can rewrite the manifest too, so it is trusted no further than that.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from packager.manifest import MANIFEST_MAX_BYTES, bounded_json
from packager.stores.base import Listed, Store
from packager.stores.capped import read_capped
from tdk.errors import TdkError

RECORD_NAME = "tdk-objects.json"
RECORD_FORMAT = 1
RECORD_MAX_BYTES = MANIFEST_MAX_BYTES  # ~150 bytes an object: far more than a release holds
MAX_TAG = 256  # an S3 ETag is 32 hex digits, or 32 + "-<parts>"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_HINT = "nothing to do: it is rewritten by the next publish that changes the release"


@dataclass(frozen=True)
class Recorded:
    """One object as tdk wrote it: its size, listing tag and sha256."""

    size: int
    tag: str
    sha256: str

    def vouches(self, listed: Listed, sha256: str) -> bool:
        """Whether the listing shows the very object recorded, recorded with ``sha256``."""
        return bool(listed.tag) and (listed.size, listed.tag, sha256) == (
            self.size,
            self.tag,
            self.sha256,
        )


def read_record(store: Store) -> tuple[dict[str, Recorded], str]:
    """The store's record (empty when the store needs none or has none yet) and, when one
    was found but set aside, why ("" otherwise)."""
    if not store.tags_in_listing:
        return {}, ""
    source = store.describe(RECORD_NAME)
    try:
        raw = read_capped(store, RECORD_NAME, RECORD_MAX_BYTES)
        return ({} if raw is None else parse_record(raw, source)), ""
    except TdkError as exc:  # too large, not a record, unreadable (TooLarge, StoreError)
        reason = exc.message
    return {}, f"{reason}; set aside, so every stored object was checked one by one instead"


def parse_record(raw: bytes, source: str) -> dict[str, Recorded]:
    """The record in ``raw``; TdkError naming ``source`` when it is not one tdk writes."""
    payload = bounded_json(raw, source, "tdk object record", _HINT)
    try:
        if payload["format_version"] != RECORD_FORMAT:
            raise ValueError(f"unsupported format_version {payload['format_version']!r}")
        objects = payload["objects"]
        if not isinstance(objects, dict):
            raise ValueError("objects is not a JSON object")
        return {key: _entry(key, value) for key, value in objects.items()}
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise TdkError(
            f"{source}: not a tdk object record ({exc.__class__.__name__}: {str(exc)[:200]})",
            hint=_HINT,
        ) from exc


def _entry(key: str, value: object) -> Recorded:
    if not isinstance(value, dict) or set(value) != {"size", "tag", "sha256"}:
        raise ValueError(f"entry {key[:100]!r} is not {{size, tag, sha256}}")
    size, tag, sha256 = value["size"], value["tag"], value["sha256"]
    if type(size) is not int or size < 0:
        raise ValueError(f"entry {key[:100]!r}: size is not a byte count")
    if not isinstance(tag, str) or not 0 < len(tag) <= MAX_TAG:
        raise ValueError(f"entry {key[:100]!r}: tag is not a listing tag")
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise ValueError(f"entry {key[:100]!r}: sha256 is not a hex sha256")
    return Recorded(size, tag, sha256)


def record_json(record: dict[str, Recorded]) -> bytes:
    objects = {key: asdict(record[key]) for key in sorted(record)}
    payload = {"format_version": RECORD_FORMAT, "objects": objects}
    return (json.dumps(payload, indent=1) + "\n").encode()


def write_record(store: Store, record: dict[str, Recorded]) -> None:
    store.put_bytes(RECORD_NAME, record_json(record), "application/json")
