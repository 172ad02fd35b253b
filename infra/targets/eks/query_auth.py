"""How the eks target's client queries Amazon Managed Service for Prometheus: SigV4."""

from __future__ import annotations

from typing import Any

from infra.clients.prometheus import Auth, Request
from tdk.errors import EndpointError


class SigV4(Auth):
    """Amazon Managed Service for Prometheus: SigV4 for service ``aps`` in ``region``.

    ``credentials`` are botocore credentials; None reads the AWS SDK's default chain.
    """

    def __init__(self, region: str, credentials: Any | None = None) -> None:
        self.region = region
        self.credentials = credentials

    def _credentials(self) -> Any:
        if self.credentials is None:
            import boto3

            found = boto3.session.Session().get_credentials()
            if found is None:
                raise EndpointError(
                    "cannot query Amazon Managed Prometheus: no AWS credentials",
                    hint="configure credentials (aws configure, AWS_PROFILE or an instance role) "
                    "allowed aps:QueryMetrics on the workspace",
                )
            self.credentials = found
        return self.credentials

    def sign(self, request: Request) -> Request:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        aws = AWSRequest(request.method, request.url, dict(request.headers), request.body)
        SigV4Auth(self._credentials(), "aps", self.region).add_auth(aws)
        return Request(request.method, request.url, dict(aws.headers.items()), request.body)

    def describe(self) -> str:
        return f"AWS SigV4 (aps, {self.region})"
