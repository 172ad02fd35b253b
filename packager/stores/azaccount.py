"""How an ``az://`` store reaches its account: the URL form, the client's limits and its
credentials (``stores.azblob`` is the store itself)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from packager.stores.base import env_number
from tdk.errors import StoreError, UsageError

SCHEME = "az"
CONNECTION_ENV = "AZURE_STORAGE_CONNECTION_STRING"
MIB = 1024 * 1024
# Naming rules: account 3-24 lowercase letters and digits; container 3-63 lowercase letters,
# digits and single dashes, starting and ending with a letter or digit. Sources:
# https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/error-storage-account-name
# and https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata
# (checked 2026-11-27).
_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")
_CONTAINER = re.compile(r"(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*")
FORM = "az://<account>/<container>/<prefix>"


@dataclass(frozen=True)
class AzSettings:
    """Network limits of the Blob client; each can be overridden by its environment variable."""

    connect_timeout: float = 10.0  # TDK_AZ_CONNECT_TIMEOUT, seconds
    read_timeout: float = 30.0  # TDK_AZ_READ_TIMEOUT, seconds without a byte from the server
    max_attempts: int = 4  # TDK_AZ_MAX_ATTEMPTS, first try included
    block_size: int = 16 * MIB  # TDK_AZ_BLOCK_SIZE, bytes: larger files go up as blocks
    copy_timeout: float = 600.0  # TDK_AZ_COPY_TIMEOUT, seconds a server-side copy may take

    @classmethod
    def from_env(cls) -> AzSettings:
        return cls(
            connect_timeout=env_number("TDK_AZ_CONNECT_TIMEOUT", float, cls.connect_timeout, 0.1),
            read_timeout=env_number("TDK_AZ_READ_TIMEOUT", float, cls.read_timeout, 0.1),
            max_attempts=env_number("TDK_AZ_MAX_ATTEMPTS", int, cls.max_attempts, 1),
            block_size=env_number("TDK_AZ_BLOCK_SIZE", int, cls.block_size, MIB),
            copy_timeout=env_number("TDK_AZ_COPY_TIMEOUT", float, cls.copy_timeout, 1.0),
        )


def parse_url(url: str) -> tuple[str, str, str]:
    """(account, container, prefix) of an ``az://`` URL; a UsageError naming the part that is
    missing or not a valid Azure name."""
    rest = url[len(SCHEME) + 3 :]
    account, _, path = rest.partition("/")
    container, _, prefix = path.partition("/")
    for what, value, rule in (
        ("storage account", account, _ACCOUNT),
        ("container", container, _CONTAINER),
    ):
        if not value:
            raise UsageError(
                f"the store URL {url!r} names no {what}",
                hint=f"use {FORM} (is a shell variable in it unset?)",
            )
        if not rule.fullmatch(value):
            raise UsageError(
                f"the store URL {url!r}: {value!r} is not a valid Azure {what} name",
                hint=f"use {FORM}; account: 3-24 lowercase letters and digits; container: "
                "3-63 lowercase letters, digits and single dashes",
            )
    return account, container, prefix.strip("/")


def service_client(url: str, account: str, settings: AzSettings) -> Any:
    """A BlobServiceClient for ``account`` with our limits, from the connection string in
    CONNECTION_ENV when set, else through DefaultAzureCredential."""
    from azure.storage.blob import BlobServiceClient, ExponentialRetry

    options: dict[str, Any] = {
        "connection_timeout": settings.connect_timeout,
        "read_timeout": settings.read_timeout,
        "retry_policy": ExponentialRetry(
            initial_backoff=1,
            increment_base=2,
            retry_total=settings.max_attempts - 1,
            random_jitter_range=1,
        ),
        "max_single_put_size": settings.block_size,
        "max_block_size": settings.block_size,
        "max_single_get_size": settings.block_size,
        "max_chunk_get_size": settings.block_size,
    }
    connection = os.environ.get(CONNECTION_ENV, "").strip()
    if not connection:
        from packager.stores.azsignin import QuietCredential

        endpoint = f"https://{account}.blob.core.windows.net"
        return BlobServiceClient(endpoint, credential=QuietCredential(url), **options)
    try:
        client = BlobServiceClient.from_connection_string(connection, **options)
    except ValueError as exc:
        raise StoreError(
            f"{url}: {CONNECTION_ENV} is not a storage connection string: {exc}",
            hint=f"set {CONNECTION_ENV} to the account's connection string, or unset it to "
            "sign in with DefaultAzureCredential (az login)",
        ) from exc
    if client.account_name != account:
        raise StoreError(
            f"{url}: {CONNECTION_ENV} is for the storage account {client.account_name!r}, "
            f"not {account!r}",
            hint=f"use az://{client.account_name}/<container>/<prefix>, or set {CONNECTION_ENV} "
            f"to the connection string of {account!r}",
        )
    return client
