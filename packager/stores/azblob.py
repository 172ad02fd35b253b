"""``az://<account>/<container>/<prefix>`` releases in Azure Blob Storage (azure-storage-blob).

The URL names the storage account, then the container, then the release's prefix in it (as
``https://<account>.blob.core.windows.net/<container>/<prefix>`` does); the account and
container must already exist. Credentials: the connection string in
``AZURE_STORAGE_CONNECTION_STRING`` when set (Azurite, or an account key), else
``DefaultAzureCredential`` (``az login``, workload identity, a managed identity).

Every call has connect/read timeouts and a bounded number of attempts, so an endpoint that
stalls ends in a StoreError, never a hang. A large file goes up as blocks committed by one
Put Block List at the end: until then no blob exists, and blocks never committed are removed
by the service (a cut-off upload leaves nothing visible to clean).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packager.stores.azaccount import (
    CONNECTION_ENV,
    FORM,
    SCHEME,
    AzSettings,
    parse_url,
    service_client,
)
from packager.stores.base import CHUNK, Listed, Progress, Store, StoreKind, _noop, download_via_part
from tdk.errors import StoreError

SHA_META = "sha256"  # blob metadata: the hex sha256 of the bytes tdk wrote
# blob metadata: the base64 MD5 of the bytes tdk wrote, which tdk also sends as the blob's
# Content-MD5. A later Put Blob by anyone else stores the MD5 the service computes of its own
# bytes (or none, through blocks), so the two differ once the stored bytes are not tdk's.
MD5_META = "md5"
CONCURRENCY = 4


class AzStore(Store):
    """A release under a prefix of an Azure Blob Storage container."""

    def __init__(self, url: str, account: str, container: str, prefix: str) -> None:
        super().__init__(url)
        self.account, self.prefix = account, prefix
        self.settings = AzSettings.from_env()
        self.service: Any = service_client(url, account, self.settings)
        self.container: Any = self.service.get_container_client(container)

    def _name(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _blob(self, key: str) -> Any:
        return self.container.get_blob_client(self._name(key))

    def unsafe_root(self, prune: bool) -> str | None:
        if prune and not self.prefix:
            return "it is a whole container, and --prune would act on all of it"
        return None

    @property
    def root_parts(self) -> list[str]:
        return [part for part in self.prefix.split("/") if part]

    def _call(self, action: str, key: str, fn: Callable[[], Any], absent: Any = ...) -> Any:
        """``fn()``; ``absent`` when it finds no blob (when given), else a StoreError."""
        from azure.core.exceptions import AzureError, ResourceNotFoundError

        try:
            return fn()
        except ResourceNotFoundError as exc:
            if absent is not ... and _code(exc) == "BlobNotFound":
                return absent
            raise self._error(action, key, exc) from exc
        except (AzureError, OSError, ValueError) as exc:
            raise self._error(action, key, exc) from exc

    def _error(self, action: str, key: str, exc: BaseException) -> StoreError:
        from azure.core.exceptions import (
            ClientAuthenticationError,
            ServiceRequestError,
            ServiceResponseError,
        )

        what = f"cannot {action} {self.describe(key)}"
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        if isinstance(exc, ServiceRequestError | ServiceResponseError):
            limits = self.settings
            return StoreError(
                f"{what}: {exc.__class__.__name__}: {first} (no answer in "
                f"{limits.max_attempts} attempt(s) of {limits.connect_timeout:g} s to connect / "
                f"{limits.read_timeout:g} s to read)",
                hint="check that the endpoint is up and reachable; TDK_AZ_CONNECT_TIMEOUT, "
                "TDK_AZ_READ_TIMEOUT and TDK_AZ_MAX_ATTEMPTS set these limits",
            )
        if isinstance(exc, ClientAuthenticationError):
            return StoreError(
                f"{what}: not authorised: {first}",
                hint=f"run `az login` (DefaultAzureCredential), or set {CONNECTION_ENV}; the "
                "identity needs the Storage Blob Data Contributor role on the container",
            )
        if _code(exc) == "ContainerNotFound":
            return StoreError(
                f"{what}: the container {self.container.container_name!r} does not exist in "
                f"the storage account {self.account!r}",
                hint=f"create it (az storage container create --account-name {self.account} "
                f"--name {self.container.container_name} --auth-mode login) or fix the URL",
            )
        return super()._error(action, key, exc)

    def exists_at(self, parts: list[str]) -> bool:
        name = "/".join(parts)
        client = self.container.get_blob_client(name)
        return bool(self._call("inspect", name, client.get_blob_properties, absent=None))

    def _properties(self, key: str) -> Any:
        return self._call("inspect", key, self._blob(key).get_blob_properties, absent=None)

    def sha256_of(self, key: str) -> str | None:
        props = self._properties(key)
        value = (props.metadata or {}).get(SHA_META) if props is not None else None
        return str(value) if value else None

    def checksum_matches(self, key: str, sha256: str) -> bool | None:
        """The blob's Content-MD5 against the MD5 tdk recorded of its bytes, and the recorded
        sha256 against ``sha256`` (see ``_verdict``). Content-MD5 semantics (Put Blob
        validates and stores it, computing it when absent; Put Block List stores what the
        client sends): https://learn.microsoft.com/rest/api/storageservices/put-blob and
        .../put-block-list (checked 2026-11-27)."""
        props = self._properties(key)
        if props is None:
            return False
        return _verdict(props.metadata, props.content_settings.content_md5, sha256)

    def _upload(self, key: str, data: Any, meta: dict[str, str], **extra: Any) -> Any:
        from azure.storage.blob import ContentSettings

        settings = ContentSettings(
            content_type=extra.pop("content_type", None)
            or ("application/gzip" if key.endswith(".gz") else "application/octet-stream"),
            content_md5=bytearray(base64.b64decode(meta[MD5_META])),
        )
        return self._blob(key).upload_blob(
            data, overwrite=True, metadata=meta, content_settings=settings, **extra
        )

    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        def upload() -> None:
            meta = {SHA_META: sha256, MD5_META: _md5_file(path)}
            with path.open("rb") as handle:
                self._upload(
                    key,
                    handle,
                    meta,
                    length=path.stat().st_size,
                    max_concurrency=CONCURRENCY,
                    progress_hook=_Deltas(progress),
                )

        self._call("upload", key, upload)

    def copy(self, source_key: str, key: str, sha256: str) -> None:
        """A server-side Copy Blob (the bytes never pass through this machine), waited for up
        to TDK_AZ_COPY_TIMEOUT seconds; the copy keeps the source's Content-MD5."""
        source = self._blob(source_key)

        def run() -> None:
            # the source's recorded MD5 (none: the copy cannot be vouched for, and is redone)
            recorded = (source.get_blob_properties().metadata or {}).get(MD5_META, "")
            meta = {SHA_META: sha256, MD5_META: recorded}
            target = self._blob(key)
            copied = target.start_copy_from_url(source.url, metadata=meta)
            self._await_copy(target, key, str(copied.get("copy_status")))

        self._call("copy to", key, run)

    def _await_copy(self, target: Any, key: str, status: str) -> None:
        deadline = time.monotonic() + self.settings.copy_timeout
        while status == "pending" and time.monotonic() < deadline:
            time.sleep(0.5)  # the service copies asynchronously: poll its status, bounded
            status = str(target.get_blob_properties().copy.status)
        if status == "success":
            return
        if status == "pending":
            target.abort_copy(target.get_blob_properties().copy.id)
        raise StoreError(
            f"cannot copy to {self.describe(key)}: the service's copy ended {status!r}"
            + (f" after {self.settings.copy_timeout:g} s" if status == "pending" else ""),
            hint="retry the publish; TDK_AZ_COPY_TIMEOUT sets how long a copy may take",
        )

    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        meta = {SHA_META: hashlib.sha256(data).hexdigest(), MD5_META: _md5([data])}
        self._call("write", key, lambda: self._upload(key, data, meta, content_type=content_type))

    def get_bytes(self, key: str) -> bytes:
        return bytes(self._call("read", key, lambda: self._blob(key).download_blob().readall()))

    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        def write(part: Path) -> None:
            stream = self._blob(key).download_blob(
                max_concurrency=CONCURRENCY, progress_hook=_Deltas(progress)
            )
            with part.open("wb") as handle:
                stream.readinto(handle)

        download_via_part(dest, write, lambda fetch: self._call("download", key, fetch))

    def delete(self, key: str) -> None:
        self._call("delete", key, self._blob(key).delete_blob, absent=None)

    def read_prefix(self, key: str, limit: int) -> bytes | None:
        def read() -> bytes:
            return bytes(self._blob(key).download_blob(offset=0, length=limit).readall())

        data: bytes | None = self._call("read", key, read, absent=None)
        return data

    # Conditional writes: If-None-Match: * creates only if absent, If-Match: <ETag> replaces or
    # deletes only that version. Source:
    # https://learn.microsoft.com/rest/api/storageservices/specifying-conditional-headers-for-blob-service-operations
    # (checked 2026-11-27); Azurite 3.35 answers 409 BlobAlreadyExists / 412 ConditionNotMet.
    def _conditional(self, action: str, key: str, call: Callable[[], Any]) -> Any:
        from azure.core.exceptions import ResourceExistsError, ResourceModifiedError

        try:
            return self._call(action, key, call, absent=None)
        except StoreError as exc:
            if isinstance(exc.__cause__, ResourceExistsError | ResourceModifiedError):
                return None
            raise

    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        def read() -> tuple[bytes, str]:
            stream = self._blob(key).download_blob()
            return bytes(stream.readall()), str(stream.properties.etag)

        result: tuple[bytes, str] | None = self._conditional("read", key, read)
        return result

    def _put(self, key: str, data: bytes, **condition: Any) -> str | None:
        def put() -> str:
            blob = self._blob(key)
            return str(blob.upload_blob(data, overwrite=True, **condition)["etag"])

        token: str | None = self._conditional("write", key, put)
        return token

    def create_exclusive(self, key: str, data: bytes) -> str | None:
        from azure.core import MatchConditions

        return self._put(key, data, match_condition=MatchConditions.IfMissing)

    def replace_if(self, key: str, data: bytes, token: str) -> str | None:
        from azure.core import MatchConditions

        return self._put(key, data, etag=token, match_condition=MatchConditions.IfNotModified)

    def delete_if(self, key: str, token: str) -> bool:
        from azure.core import MatchConditions

        def delete() -> bool:
            condition = MatchConditions.IfNotModified
            self._blob(key).delete_blob(etag=token, match_condition=condition)
            return True

        return bool(self._conditional("delete", key, delete))

    def list_sizes(self, prefix: str) -> dict[str, int]:
        return {key: listed.size for key, listed in self.list_objects(prefix).items()}

    def list_objects(self, prefix: str) -> dict[str, Listed]:
        """One List Blobs (paged) with metadata: each item carries the size, ETag, Content-MD5
        and metadata, so ``checksum_matches`` is answered from it with no request per blob
        (https://learn.microsoft.com/rest/api/storageservices/list-blobs, ``include=metadata``;
        checked 2026-11-27)."""
        root = self._name("")

        def listing() -> list[Any]:
            names = self._name(prefix)
            return list(self.container.list_blobs(name_starts_with=names, include=["metadata"]))

        return {
            blob.name[len(root) :]: Listed(
                int(blob.size),
                tag=str(blob.etag or "").strip('"'),
                verdict=functools.partial(
                    _verdict, blob.metadata, blob.content_settings.content_md5
                ),
            )
            for blob in self._call("list", prefix, listing)
        }


class _Deltas:
    """azure-storage-blob's ``progress_hook(current, total)`` as our byte-count callback."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._seen = 0

    def __call__(self, current: int, total: int | None) -> None:
        delta, self._seen = current - self._seen, max(self._seen, current)
        if delta > 0:
            self._progress(delta)


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "error_code", "") or "")


def _verdict(metadata: dict[str, str] | None, content_md5: Any, sha256: str) -> bool:
    """``checksum_matches`` from a blob's metadata and Content-MD5: tdk's sha256 must be the
    one asked about, and the Content-MD5 the one tdk recorded. A blob without either was not
    written whole by tdk: False."""
    metadata = metadata or {}
    if metadata.get(SHA_META) != sha256:
        return False
    recorded = metadata.get(MD5_META)
    stored = base64.b64encode(bytes(content_md5)).decode() if content_md5 else ""
    return bool(recorded) and recorded == stored


def _md5(chunks: Any) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    for chunk in chunks:
        digest.update(chunk)
    return base64.b64encode(digest.digest()).decode()


def _md5_file(path: Path) -> str:
    def chunks() -> Any:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk

    return _md5(chunks())


def _open(url: str, endpoint_url: str | None) -> AzStore:
    del endpoint_url  # an S3-compatible store's option
    return AzStore(url, *parse_url(url))


KIND = StoreKind(SCHEME, FORM, _open)
