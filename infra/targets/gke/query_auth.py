"""How the gke target's client queries Google Managed Prometheus: a Bearer token."""

from __future__ import annotations

from typing import Any

from infra.clients.prometheus import Auth, Request
from tdk.errors import EndpointError

GMP_SCOPE = "https://www.googleapis.com/auth/monitoring.read"


class GoogleBearer(Auth):
    """Google Managed Prometheus: an OAuth access token from Google credentials.

    ``credentials`` are ``google.auth`` credentials; None reads Application Default Credentials.
    """

    def __init__(self, credentials: Any | None = None) -> None:
        self.credentials = credentials

    def _credentials(self) -> Any:
        if self.credentials is None:
            import google.auth
            from google.auth.exceptions import DefaultCredentialsError

            try:
                self.credentials, _ = google.auth.default(scopes=[GMP_SCOPE])
            except DefaultCredentialsError as exc:
                raise EndpointError(
                    f"cannot query Google Managed Prometheus: no Google credentials ({exc})",
                    hint="run `gcloud auth application-default login` or set "
                    "GOOGLE_APPLICATION_CREDENTIALS; the account needs roles/monitoring.viewer",
                ) from None
        return self.credentials

    def sign(self, request: Request) -> Request:
        from google.auth.transport.requests import Request as Transport

        credentials = self._credentials()
        if not credentials.valid:
            credentials.refresh(Transport())
        headers = dict(request.headers)
        credentials.apply(headers)
        return Request(request.method, request.url, headers, request.body)

    def describe(self) -> str:
        return "Google credentials (Bearer token)"
