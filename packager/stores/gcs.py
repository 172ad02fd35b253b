"""``gs://bucket/prefix`` releases through google-cloud-storage (resumable uploads)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlparse

from packager.stores.base import (
    Listed,
    Progress,
    Store,
    StoreKind,
    _noop,
    download_via_part,
    require_bucket,
)
from tdk.errors import StoreError

SHA_META = "sha256"
# object metadata key: the base64 CRC32C of the bytes tdk uploaded, computed here before the
# upload; Cloud Storage computes its own ``crc32c`` of what it stores, so the two differ once
# the stored bytes are not the ones tdk wrote.
CRC_META = "crc32c"
CHUNK_SIZE = 16 * 1024 * 1024  # resumable upload chunk (a multiple of 256 KiB)


class _CountingReader:
    """A file wrapper that reports bytes read, for upload progress."""

    def __init__(self, handle: IO[bytes], progress: Progress) -> None:
        self._handle = handle
        self._progress = progress

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self._progress(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


class GcsStore(Store):
    """A release under a Google Cloud Storage prefix (``STORAGE_EMULATOR_HOST`` honoured)."""

    def __init__(self, url: str, bucket: str, prefix: str) -> None:
        super().__init__(url)
        if not bucket:
            raise StoreError(f"{url}: no bucket in the URL", hint="use gs://bucket/prefix")
        from google.cloud import storage

        self.prefix = prefix
        try:
            if os.environ.get("STORAGE_EMULATOR_HOST"):
                from google.auth.credentials import AnonymousCredentials

                client = storage.Client(project="tdk-emulator", credentials=AnonymousCredentials())
            else:
                client = storage.Client()
        except Exception as exc:  # google.auth raises several unrelated types
            raise StoreError(
                f"{url}: cannot create a Cloud Storage client: {exc}",
                hint="run `gcloud auth application-default login` or set "
                "GOOGLE_APPLICATION_CREDENTIALS",
            ) from exc
        self.client: Any = client
        self.bucket: Any = client.bucket(bucket)

    def unsafe_root(self, prune: bool) -> str | None:
        if prune and not self.prefix:
            return "it is a whole bucket, and --prune would act on all of it"
        return None

    def _name(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _call(self, action: str, key: str, fn: Any) -> Any:
        from google.api_core import exceptions as gexc

        try:
            return fn()
        except (gexc.GoogleAPIError, OSError, ValueError) as exc:
            raise self._error(action, key, exc) from exc

    @property
    def root_parts(self) -> list[str]:
        return [part for part in self.prefix.split("/") if part]

    def exists_at(self, parts: list[str]) -> bool:
        name = "/".join(parts)
        return self._call("inspect", name, lambda: self.bucket.get_blob(name)) is not None

    def sha256_of(self, key: str) -> str | None:
        blob = self._call("inspect", key, lambda: self.bucket.get_blob(self._name(key)))
        if blob is None:
            return None
        value = (blob.metadata or {}).get(SHA_META)
        return str(value) if value else None

    def checksum_matches(self, key: str, sha256: str) -> bool | None:
        """Cloud Storage's own CRC32C of the stored bytes (``crc32c``) against the one tdk
        recorded from its bytes at upload, and the recorded sha256 against ``sha256``. An
        object without tdk's sha256 is not ours: False; one from before tdk recorded its
        CRC32C: None. Fields: https://cloud.google.com/storage/docs/json_api/v1/objects
        (``crc32c``, ``md5Hash``, ``metadata``; checked 2026-11-26)."""
        blob = self._call("inspect", key, lambda: self.bucket.get_blob(self._name(key)))
        if blob is None:
            return False
        return _verdict(blob.metadata, blob.crc32c, sha256)

    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        blob = self.bucket.blob(self._name(key), chunk_size=CHUNK_SIZE)

        def upload() -> None:
            blob.metadata = {SHA_META: sha256, CRC_META: _crc32c(_chunks(path))}
            with path.open("rb") as handle:
                # A resumable upload's object appears only once the last chunk is committed.
                blob.upload_from_file(
                    _CountingReader(handle, progress),
                    size=path.stat().st_size,
                    content_type="application/gzip" if key.endswith(".gz") else None,
                    checksum="crc32c",
                )

        self._call("upload", key, upload)

    def copy(self, source_key: str, key: str, sha256: str) -> None:
        def rewrite() -> None:
            # The rewrite API copies inside Cloud Storage, in several calls for large objects.
            source = self.bucket.blob(self._name(source_key))
            target = self.bucket.blob(self._name(key))
            token, _, _ = target.rewrite(source)
            while token is not None:
                token, _, _ = target.rewrite(source, token=token)
            # the rewrite copied the source's metadata, its CRC32C of the bytes tdk wrote too
            crc = (target.metadata or {}).get(CRC_META)
            target.metadata = {SHA_META: sha256, **({CRC_META: crc} if crc else {})}
            target.patch()

        self._call("copy to", key, rewrite)

    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        import hashlib

        blob = self.bucket.blob(self._name(key))
        blob.metadata = {SHA_META: hashlib.sha256(data).hexdigest(), CRC_META: _crc32c([data])}
        self._call("write", key, lambda: blob.upload_from_string(data, content_type=content_type))

    def get_bytes(self, key: str) -> bytes:
        blob = self.bucket.blob(self._name(key))
        return bytes(self._call("read", key, blob.download_as_bytes))

    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        blob = self.bucket.blob(self._name(key), chunk_size=CHUNK_SIZE)

        def write(part: Path) -> None:
            blob.download_to_filename(str(part))
            progress(part.stat().st_size)

        download_via_part(dest, write, lambda fetch: self._call("download", key, fetch))

    def delete(self, key: str) -> None:
        from google.api_core import exceptions as gexc

        try:
            self.bucket.blob(self._name(key)).delete()
        except gexc.NotFound:
            return
        except (gexc.GoogleAPIError, OSError) as exc:
            raise self._error("delete", key, exc) from exc

    # Conditional writes: ifGenerationMatch=0 creates only if absent, =<generation> replaces or
    # deletes only that version. Source: https://cloud.google.com/storage/docs/request-preconditions
    # (checked 2026-11-24).
    def _conditional(self, action: str, key: str, call: Any) -> Any:
        from google.api_core import exceptions as gexc

        try:
            return call()
        except (gexc.PreconditionFailed, gexc.NotFound, gexc.Conflict):
            return None
        except (gexc.GoogleAPIError, OSError, ValueError) as exc:
            raise self._error(action, key, exc) from exc

    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        def read() -> tuple[bytes, str] | None:
            blob = self.bucket.get_blob(self._name(key))
            if blob is None:
                return None
            data = blob.download_as_bytes(if_generation_match=blob.generation)
            return bytes(data), str(blob.generation)

        result: tuple[bytes, str] | None = self._conditional("read", key, read)
        return result

    def _put(self, key: str, data: bytes, generation: int) -> str | None:
        def put() -> str:
            blob = self.bucket.blob(self._name(key))
            blob.upload_from_string(data, if_generation_match=generation)
            return str(blob.generation)

        token: str | None = self._conditional("write", key, put)
        return token

    def create_exclusive(self, key: str, data: bytes) -> str | None:
        return self._put(key, data, 0)

    def replace_if(self, key: str, data: bytes, token: str) -> str | None:
        return self._put(key, data, int(token))

    def delete_if(self, key: str, token: str) -> bool:
        def delete() -> bool:
            self.bucket.blob(self._name(key)).delete(if_generation_match=int(token))
            return True

        return bool(self._conditional("delete", key, delete))

    def list_sizes(self, prefix: str) -> dict[str, int]:
        return {key: listed.size for key, listed in self.list_objects(prefix).items()}

    def list_objects(self, prefix: str) -> dict[str, Listed]:
        """One objects.list: each item is a whole object resource (``size``, ``crc32c``,
        ``metadata``), so ``checksum_matches`` is answered from it with no request per object
        and GCS needs no record (``stores.record``). Resource fields:
        https://cloud.google.com/storage/docs/json_api/v1/objects; google-cloud-storage 3.17
        lists with ``projection=noAcl``, which keeps them (both checked 2026-11-26)."""
        root = self._name("")
        blobs = self._call(
            "list",
            prefix,
            lambda: list(self.client.list_blobs(self.bucket, prefix=self._name(prefix))),
        )
        return {
            blob.name[len(root) :]: Listed(
                int(blob.size if blob.size is not None else -1),
                verdict=functools.partial(_verdict, blob.metadata, blob.crc32c),
            )
            for blob in blobs
        }


def _verdict(metadata: dict[str, str] | None, crc32c: str | None, sha256: str) -> bool | None:
    """``checksum_matches`` from an object's metadata and Cloud Storage's ``crc32c``."""
    metadata = metadata or {}
    if metadata.get(SHA_META) != sha256:
        return False
    recorded = metadata.get(CRC_META)
    if not recorded:
        return None
    return bool(recorded == crc32c)


def _crc32c(chunks: Iterable[bytes]) -> str:
    """The base64 CRC32C of ``chunks``' bytes, as Cloud Storage writes an object's ``crc32c``."""
    import base64

    import google_crc32c

    checksum = google_crc32c.Checksum()
    for chunk in chunks:
        checksum.update(chunk)
    return base64.b64encode(checksum.digest()).decode()


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_SIZE):
            yield chunk


def _open(url: str, endpoint_url: str | None) -> GcsStore:
    del endpoint_url  # an S3-compatible store's option
    parsed = urlparse(url)
    bucket = require_bucket(url, parsed.netloc, FORM)
    return GcsStore(url, bucket, parsed.path.strip("/"))


FORM = "gs://bucket/prefix"
KIND = StoreKind("gs", FORM, _open)
