"""Azure sign-in for the ``az://`` store, in one line: ``DefaultAzureCredential`` logs a warning
of a dozen lines per attempt (one per credential of its chain) and the Blob client retries an
attempt that failed to sign in, so a machine without ``az login`` printed ~50 lines and waited
through the retries' backoff before the store's own one-line error (issue 49 item 7)."""

from __future__ import annotations

import logging
from typing import Any

from tdk.errors import StoreError

# azure-identity 1.27.0 (.venv/lib/python3.11/site-packages/azure/identity/_credentials/
# chained.py, checked 2026-12-07): the chain's failure is logged as a WARNING on this logger
# and raised as ClientAuthenticationError whose message lists "\tName: reason" per credential.
IDENTITY_LOGGER = "azure.identity"
SIGNIN_HINT = (
    "run `az login` (the Azure CLI), or set AZURE_STORAGE_CONNECTION_STRING (an account key, "
    "or Azurite's); a service principal: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET"
)


def quiet_identity_log() -> None:
    """Keep the chain's warnings off stderr (Python's last-resort handler printed them); a
    logging set up by the caller above still receives them."""
    logger = logging.getLogger(IDENTITY_LOGGER)
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def summary(message: str) -> str:
    """One line of a credential chain's failure: how many ways were tried, and what the Azure
    CLI (the usual fix) said."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    tried = dict(
        line.split(":", 1) for line in lines if line.partition(":")[0].endswith("Credential")
    )
    if not tried:
        return lines[0] if lines else "no Azure credential"
    cli = tried.get("AzureCliCredential", "").strip()
    said = f"; the Azure CLI: {cli}" if cli else ""
    return (
        f"no Azure sign-in: none of the {len(tried)} credentials DefaultAzureCredential tries "
        f"worked{said}"
    )


class QuietCredential:
    """``DefaultAzureCredential`` that fails once, in one line: its first failure to sign in is
    a StoreError naming ``url`` and ``az login`` (not an Azure error, so the Blob client's
    retries do not ask again), and the chain's warnings stay off stderr."""

    def __init__(self, url: str, inner: Any = None) -> None:
        quiet_identity_log()
        if inner is None:
            from azure.identity import DefaultAzureCredential

            inner = DefaultAzureCredential()
        self.url, self.inner = url, inner

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        return self._ask("get_token", scopes, kwargs)

    def get_token_info(self, *scopes: str, options: Any = None) -> Any:
        return self._ask("get_token_info", scopes, {} if options is None else {"options": options})

    def close(self) -> None:
        self.inner.close()

    def _ask(self, name: str, scopes: tuple[str, ...], kwargs: dict[str, Any]) -> Any:
        from azure.core.exceptions import ClientAuthenticationError

        try:
            return getattr(self.inner, name)(*scopes, **kwargs)
        except ClientAuthenticationError as exc:
            raise StoreError(f"{self.url}: {summary(str(exc))}", hint=SIGNIN_HINT) from None
