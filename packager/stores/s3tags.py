"""The ETag of every object an S3 client of ours wrote, as each write's own response named it.

A republish compares these (kept in ``stores.record``) with one ListObjectsV2 instead of asking
about each object: the listing carries each object's ETag and size but no checksum value
(botocore 1.44 ``s3`` service model, shape ``Object``: Key, LastModified, ETag,
ChecksumAlgorithm (a list of algorithm names), ChecksumType, Size, StorageClass, Owner,
RestoreStatus; checked 2026-11-26).
"""

from __future__ import annotations

import threading
from typing import Any

# The writes whose response names the new object's ETag: botocore 1.44 ``s3`` service model,
# PutObjectOutput.ETag, CopyObjectOutput.CopyObjectResult.ETag (CopyObjectResult),
# CompleteMultipartUploadOutput.ETag (checked 2026-11-26).
TAGGED_WRITES = ("PutObject", "CopyObject", "CompleteMultipartUpload")
_KEY_CONTEXT = "tdk_key"


class WrittenTags:
    """Hooks on ``client``'s events that remember the ETag of each successful write under
    ``root`` (one ``after-call`` per API call, after botocore's retries), by relative key."""

    def __init__(self, client: Any, root: str) -> None:
        self.root = root
        self._tags: dict[str, str] = {}
        self._lock = threading.Lock()
        events = client.meta.events
        for operation in TAGGED_WRITES:
            events.register(f"before-parameter-build.s3.{operation}", _note_key)
            events.register(f"after-call.s3.{operation}", self._note_tag)

    def _note_tag(self, http_response: Any, parsed: Any, context: Any, **_: Any) -> None:
        key = context.get(_KEY_CONTEXT) if isinstance(context, dict) else None
        if not isinstance(key, str) or getattr(http_response, "status_code", 500) >= 300:
            return
        if not isinstance(parsed, dict) or "Error" in parsed:
            return
        result = parsed.get("CopyObjectResult", parsed)
        etag = result.get("ETag") if isinstance(result, dict) else None
        if isinstance(etag, str) and etag.strip('"') and key.startswith(self.root):
            with self._lock:
                self._tags[key[len(self.root) :]] = plain_etag(etag)

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self._tags)


def _note_key(params: Any, context: Any, **_: Any) -> None:
    """Carry a write's key from its parameters to its ``after-call`` event (same context)."""
    if isinstance(params, dict) and isinstance(context, dict):
        context[_KEY_CONTEXT] = params.get("Key")


def plain_etag(etag: str) -> str:
    """An ETag without the quotes S3 puts around it (listings and responses agree then)."""
    return etag.strip().strip('"')
