"""Operations on a deployed aks stack: figures from the Azure Monitor workspace's Prometheus
query API (an Entra token for ``https://prometheus.monitor.azure.com``), Triton readiness."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from infra.clients.prometheus import Auth, NoAuth, PrometheusClient, Request
from infra.targets.aks.builders import PROMETHEUS_SCOPE
from infra.targets.aks.entry import ENTRY
from infra.targets.k8s.client import KubernetesClient, stack_config
from infra.targets.operations import Locator, Reading
from tdk.errors import EndpointError, UsageError

#: the host suffix of every Azure Monitor workspace query endpoint
WORKSPACE_HOST = ".prometheus.monitor.azure.com"
WORKSPACE_HINT = (
    "pass --prometheus-url with the stack's output prometheusQueryUrl "
    "(`pulumi stack output prometheusQueryUrl -s <stack>`), or --outputs FILE"
)


class EntraBearer(Auth):
    """An Entra ID access token for Azure Monitor's Prometheus query API.

    ``credential`` is an ``azure.identity`` credential; None: ``DefaultAzureCredential``
    (``az login``, workload identity, a managed identity). The caller needs the
    Monitoring Data Reader role on the workspace.
    """

    def __init__(self, credential: Any | None = None) -> None:
        self.credential = credential

    def sign(self, request: Request) -> Request:
        if self.credential is None:
            from azure.identity import DefaultAzureCredential

            self.credential = DefaultAzureCredential()
        try:
            token = self.credential.get_token(PROMETHEUS_SCOPE).token
        except Exception as exc:  # azure-identity raises its own errors per credential
            raise EndpointError(
                f"cannot query the Azure Monitor workspace: no Entra token ({exc})",
                hint="run `az login`; the account needs Monitoring Data Reader on the workspace",
            ) from None
        headers = {**request.headers, "Authorization": f"Bearer {token}"}
        return Request(request.method, request.url, headers, request.body)

    def describe(self) -> str:
        return "Entra ID credentials (Bearer token)"


class AksClient(KubernetesClient):
    """An aks workload; metrics through the Azure Monitor workspace's Prometheus API.

    Status and readiness need only Triton's URL; the workspace is asked for by metrics."""

    target = ENTRY.name
    workspace_missing = False

    def metrics(self, window: timedelta | None) -> list[Reading]:
        if self.workspace_missing:
            raise UsageError("--target aks needs the Azure Monitor workspace for metrics",
                             WORKSPACE_HINT)  # fmt: skip
        return super().metrics(window)


def auth_for(url: str, credential: Any | None = None) -> Auth:
    """An Entra token for an Azure Monitor workspace; no auth for any other Prometheus."""
    host = urlsplit(url).hostname or ""
    return EntraBearer(credential) if host.endswith(WORKSPACE_HOST) else NoAuth()


def from_locator(where: Locator) -> AksClient:
    config = stack_config(where, ENTRY.name)
    url = where.prometheus_url or "https://workspace-unknown" + WORKSPACE_HOST
    prometheus = PrometheusClient(url, auth_for(url))
    client = AksClient(config.workload.namespace, config.common.name, prometheus, where.url)
    client.workspace_missing = not where.prometheus_url
    return client
