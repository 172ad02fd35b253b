"""``s3://bucket/prefix`` releases through boto3: multipart, parallel parts, SHA-256 checksums."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

from packager.stores.base import Progress, Store, _noop
from tdk.errors import StoreError

PART_SIZE = 16 * 1024 * 1024
CONCURRENCY = 8
SHA_META = "sha256"  # object metadata key: the hex sha256 of the whole object


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
        config = Config(
            retries={"max_attempts": 5, "mode": "standard"}, max_pool_connections=2 * CONCURRENCY
        )
        self.client: Any = boto3.client("s3", endpoint_url=endpoint_url, config=config)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _transfer(self) -> Any:
        from boto3.s3.transfer import TransferConfig

        return TransferConfig(
            multipart_threshold=PART_SIZE,
            multipart_chunksize=PART_SIZE,
            max_concurrency=CONCURRENCY,
            use_threads=True,
        )

    @staticmethod
    def _missing(exc: Exception) -> bool:
        response = getattr(exc, "response", {}) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        return code in ("404", "NoSuchKey", "NotFound")

    def sha256_of(self, key: str) -> str | None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError as exc:
            if self._missing(exc):
                return None
            raise self._error("inspect", key, exc) from exc
        except BotoCoreError as exc:
            raise self._error("inspect", key, exc) from exc
        value = head.get("Metadata", {}).get(SHA_META)
        return str(value) if value else None

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

        tmp = dest.with_name(dest.name + ".part")
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            self.client.download_file(
                self.bucket, self._key(key), str(tmp), Callback=progress, Config=self._transfer()
            )
            os.replace(tmp, dest)
        except (BotoCoreError, ClientError, OSError) as exc:
            tmp.unlink(missing_ok=True)
            raise self._error("download", key, exc) from exc

    def delete(self, key: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except (BotoCoreError, ClientError) as exc:
            raise self._error("delete", key, exc) from exc

    def list_keys(self, prefix: str) -> list[str]:
        from botocore.exceptions import BotoCoreError, ClientError

        root = self._key("")
        keys: list[str] = []
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self._key(prefix)
            )
            for page in pages:
                keys.extend(item["Key"][len(root) :] for item in page.get("Contents", []))
        except (BotoCoreError, ClientError) as exc:
            raise self._error("list", prefix, exc) from exc
        return sorted(keys)
