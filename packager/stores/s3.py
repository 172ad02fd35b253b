"""``s3://bucket/prefix`` releases through boto3: multipart, parallel parts, SHA-256 checksums.

Every call has connect/read timeouts and botocore's bounded "standard" retries, so an endpoint
that stalls ends in a StoreError, never a hang. A multipart upload that fails is aborted by
s3transfer when the endpoint still answers; one left by a killed or cut-off publish is aborted
by the next publish (``clean_leftovers``), which aborts only uploads to keys of our releases.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from packager.stores.base import (
    Listed,
    Progress,
    Store,
    StoreKind,
    _noop,
    download_via_part,
    env_number,
    require_bucket,
)
from packager.stores.s3tags import WrittenTags, plain_etag
from tdk.errors import StoreError

MIB = 1024 * 1024
PART_SIZE = 16 * MIB
MIN_PART_SIZE = 5 * MIB  # S3's smallest part (all but the last)
# S3's largest part: 5 GiB (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html,
# checked 2026-11-27)
MAX_PART_SIZE = 5 * 1024 * MIB
CONCURRENCY = 8
SHA_META = "sha256"  # object metadata key: the hex sha256 of the whole object


@dataclass(frozen=True)
class S3Settings:
    """Network limits of the S3 client; each can be overridden by its environment variable."""

    connect_timeout: float = 10.0  # TDK_S3_CONNECT_TIMEOUT, seconds
    read_timeout: float = 30.0  # TDK_S3_READ_TIMEOUT, seconds without a byte from the server
    max_attempts: int = 4  # TDK_S3_MAX_ATTEMPTS, first try included
    part_size: int = PART_SIZE  # TDK_S3_PART_SIZE, bytes, at least 5 MiB

    @classmethod
    def from_env(cls) -> S3Settings:
        return cls(
            connect_timeout=env_number("TDK_S3_CONNECT_TIMEOUT", float, cls.connect_timeout, 0.1),
            read_timeout=env_number("TDK_S3_READ_TIMEOUT", float, cls.read_timeout, 0.1),
            max_attempts=env_number("TDK_S3_MAX_ATTEMPTS", int, cls.max_attempts, 1, 100),
            part_size=env_number(
                "TDK_S3_PART_SIZE", int, cls.part_size, MIN_PART_SIZE, MAX_PART_SIZE
            ),
        )


class S3Store(Store):
    """A release under an S3 (or S3-compatible, with ``endpoint_url``) prefix."""

    def __init__(self, url: str, bucket: str, prefix: str, endpoint_url: str | None = None):
        super().__init__(url)
        if not bucket:
            raise StoreError(f"{url}: no bucket in the URL", hint="use s3://bucket/prefix")
        import boto3
        from botocore.config import Config

        self.bucket = bucket
        self.prefix = prefix
        self.settings = settings = S3Settings.from_env()
        config = Config(
            retries={"total_max_attempts": settings.max_attempts, "mode": "standard"},
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.read_timeout,
            max_pool_connections=2 * CONCURRENCY,
        )
        self.client: Any = boto3.client("s3", endpoint_url=endpoint_url, config=config)
        self._written = WrittenTags(self.client, self._key(""))

    # ListObjectsV2 carries each object's ETag and size, no checksum value (see ``s3tags``).
    tags_in_listing = True

    def written_tags(self) -> dict[str, str]:
        return self._written.snapshot()

    def unsafe_root(self, prune: bool) -> str | None:
        if prune and not self.prefix:
            return "it is a whole bucket, and --prune would act on all of it"
        return None

    def clean_leftovers(self, owned: set[str]) -> list[str]:
        """Abort incomplete multipart uploads to keys of our releases (a cut-off publish)."""
        from botocore.exceptions import BotoCoreError, ClientError

        root = self._key("")
        aborted = super().clean_leftovers(owned)
        try:
            pages = self.client.get_paginator("list_multipart_uploads").paginate(
                Bucket=self.bucket, Prefix=root
            )
            for page in pages:
                for upload in page.get("Uploads", []):
                    key = upload["Key"][len(root) :]
                    if key in owned:
                        self.client.abort_multipart_upload(
                            Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                        )
                        aborted.append(self.describe(key))
        except (BotoCoreError, ClientError) as exc:
            raise self._error("clean incomplete uploads under", "", exc) from exc
        return aborted

    def _error(self, action: str, key: str, exc: BaseException) -> StoreError:
        from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

        if not isinstance(exc, ConnectTimeoutError | ReadTimeoutError):
            return super()._error(action, key, exc)
        limits = self.settings
        return StoreError(
            f"cannot {action} {self.describe(key)}: {exc} (no answer in {limits.max_attempts} "
            f"attempt(s) of {limits.connect_timeout:g} s to connect / {limits.read_timeout:g} s "
            "to read)",
            hint="check that the endpoint is up and reachable; TDK_S3_CONNECT_TIMEOUT, "
            "TDK_S3_READ_TIMEOUT and TDK_S3_MAX_ATTEMPTS set these limits",
        )

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _transfer(self) -> Any:
        from boto3.s3.transfer import TransferConfig

        return TransferConfig(
            multipart_threshold=self.settings.part_size,
            multipart_chunksize=self.settings.part_size,
            max_concurrency=CONCURRENCY,
            use_threads=True,
        )

    @staticmethod
    def _missing(exc: Exception) -> bool:
        response = getattr(exc, "response", {}) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        return code in ("404", "NoSuchKey", "NotFound")

    @property
    def root_parts(self) -> list[str]:
        return [part for part in self.prefix.split("/") if part]

    def _head(self, name: str, label: str, **extra: str) -> dict[str, Any] | None:
        """HeadObject of the full key ``name`` (None: no such object); other failures are a
        StoreError naming ``label``."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return dict(self.client.head_object(Bucket=self.bucket, Key=name, **extra))
        except ClientError as exc:
            if self._missing(exc):
                return None
            raise self._error("inspect", label, exc) from exc
        except BotoCoreError as exc:
            raise self._error("inspect", label, exc) from exc

    def exists_at(self, parts: list[str]) -> bool:
        name = "/".join(parts)
        return self._head(name, name) is not None

    def sha256_of(self, key: str) -> str | None:
        head = self._head(self._key(key), key)
        if head is None:
            return None
        value = head.get("Metadata", {}).get(SHA_META)
        return str(value) if value else None

    def checksum_matches(self, key: str, sha256: str) -> bool | None:
        """S3's own SHA-256 of the object (``ChecksumSHA256``, sent with every upload and
        copy, checked by S3 on arrival) against ``sha256``. A multipart object's checksum is
        one of its parts' checksums (``ChecksumType`` COMPOSITE, ETag ``…-<parts>``), which no
        whole-object sha256 can be compared with: then the sha256 recorded at upload must match.
        An object without a SHA-256 checksum was not uploaded by tdk: False.

        Fields: botocore 1.44 ``s3`` service model, ``HeadObjectRequest.ChecksumMode`` and
        ``HeadObjectOutput.ChecksumSHA256`` / ``ChecksumType``; multipart checksums:
        https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html
        (both checked 2026-11-26)."""
        head = self._head(self._key(key), key, ChecksumMode="ENABLED")
        if head is None:
            return False
        stored = str(head.get("ChecksumSHA256") or "")
        if not stored:
            return False
        etag = str(head.get("ETag", "")).strip('"')
        if head.get("ChecksumType") == "COMPOSITE" or "-" in stored or "-" in etag:
            return head.get("Metadata", {}).get(SHA_META) == sha256
        try:
            return stored == base64.b64encode(bytes.fromhex(sha256)).decode()
        except ValueError:  # not a hex digest: no object can match it
            return False

    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        # Multipart uploads become visible only when completed; boto3 aborts them on failure.
        extra = {"Metadata": {SHA_META: sha256}, "ChecksumAlgorithm": "SHA256"}
        try:
            self.client.upload_file(
                str(path),
                self.bucket,
                self._key(key),
                ExtraArgs=extra,
                Callback=progress,
                Config=self._transfer(),
            )
        except (BotoCoreError, ClientError, OSError) as exc:
            raise self._error("upload", key, exc) from exc

    def copy(self, source_key: str, key: str, sha256: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        # Server-side (multipart for large objects) copy: no bytes go through this machine.
        try:
            self.client.copy(
                {"Bucket": self.bucket, "Key": self._key(source_key)},
                self.bucket,
                self._key(key),
                ExtraArgs={
                    "Metadata": {SHA_META: sha256},
                    "MetadataDirective": "REPLACE",
                    "ChecksumAlgorithm": "SHA256",
                },
                Config=self._transfer(),
            )
        except (BotoCoreError, ClientError) as exc:
            raise self._error("copy to", key, exc) from exc

    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        digest = hashlib.sha256(data)
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=self._key(key),
                Body=data,
                ContentType=content_type,
                ChecksumAlgorithm="SHA256",  # S3 keeps the checksum only with its algorithm
                ChecksumSHA256=base64.b64encode(digest.digest()).decode(),
                Metadata={SHA_META: digest.hexdigest()},
            )
        except (BotoCoreError, ClientError) as exc:
            raise self._error("write", key, exc) from exc

    def get_bytes(self, key: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
            return bytes(response["Body"].read())
        except (BotoCoreError, ClientError) as exc:
            raise self._error("read", key, exc) from exc

    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        def write(part: Path) -> None:
            self.client.download_file(
                self.bucket, self._key(key), str(part), Callback=progress, Config=self._transfer()
            )

        def attempt(fetch: Callable[[], None]) -> None:
            try:
                fetch()
            except (BotoCoreError, ClientError, OSError) as exc:
                raise self._error("download", key, exc) from exc

        download_via_part(dest, write, attempt)

    def delete(self, key: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except (BotoCoreError, ClientError) as exc:
            raise self._error("delete", key, exc) from exc

    # Conditional writes: If-None-Match / If-Match on PutObject and If-Match on DeleteObject.
    # Source: https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html and
    # .../conditional-deletes.html (checked 2026-11-24); moto 5.2.5 honours all three (412).
    _CONFLICT = ("PreconditionFailed", "ConditionalRequestConflict", "412", "409")

    def _conditional(self, action: str, key: str, call: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return call()
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in self._CONFLICT or self._missing(exc):
                return None
            raise self._error(action, key, exc) from exc
        except BotoCoreError as exc:
            raise self._error(action, key, exc) from exc

    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        def read() -> tuple[bytes, str]:
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
            return bytes(response["Body"].read()), str(response["ETag"])

        result: tuple[bytes, str] | None = self._conditional("read", key, read)
        return result

    def _put(self, key: str, data: bytes, **condition: str) -> str | None:
        def put() -> str:
            response = self.client.put_object(
                Bucket=self.bucket, Key=self._key(key), Body=data, **condition
            )
            return str(response["ETag"])

        token: str | None = self._conditional("write", key, put)
        return token

    def create_exclusive(self, key: str, data: bytes) -> str | None:
        return self._put(key, data, IfNoneMatch="*")

    def replace_if(self, key: str, data: bytes, token: str) -> str | None:
        return self._put(key, data, IfMatch=token)

    def delete_if(self, key: str, token: str) -> bool:
        def delete() -> bool:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key), IfMatch=token)
            return True

        return bool(self._conditional("delete", key, delete))

    def list_sizes(self, prefix: str) -> dict[str, int]:
        return {key: listed.size for key, listed in self.list_objects(prefix).items()}

    def list_objects(self, prefix: str) -> dict[str, Listed]:
        from botocore.exceptions import BotoCoreError, ClientError

        root = self._key("")
        listed: dict[str, Listed] = {}
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self._key(prefix)
            )
            for page in pages:
                for item in page.get("Contents", []):
                    tag = plain_etag(str(item.get("ETag") or ""))
                    listed[item["Key"][len(root) :]] = Listed(int(item.get("Size", -1)), tag)
        except (BotoCoreError, ClientError) as exc:
            raise self._error("list", prefix, exc) from exc
        return listed

    def read_prefix(self, key: str, limit: int) -> bytes | None:
        """One GetObject, of which at most ``limit`` bytes are read (no HeadObject first, as
        a managed download would send)."""

        def read() -> bytes:
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
            try:
                return bytes(body.read(limit))
            finally:
                body.close()

        data: bytes | None = self._conditional("read", key, read)
        return data


def _open(url: str, endpoint_url: str | None) -> S3Store:
    parsed = urlparse(url)
    bucket = require_bucket(url, parsed.netloc, FORM)
    return S3Store(url, bucket, parsed.path.strip("/"), endpoint_url=endpoint_url)


FORM = "s3://bucket/prefix"
KIND = StoreKind("s3", FORM, _open)
