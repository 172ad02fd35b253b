"""Operations on a deployed aks stack: figures from the Azure Monitor workspace's Prometheus
query API (an Entra token for ``https://prometheus.monitor.azure.com``), Triton readiness."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from infra.clients.prometheus import Auth, NoAuth, PrometheusClient, Request
from infra.k8s.client import KubernetesClient, KubernetesLocator, workload_client
from infra.targets.aks.builders import PROMETHEUS_SCOPE
from infra.targets.operations import Reading, output_text
from packager.stores.azsignin import quiet_identity_log, summary
from tdk.errors import EndpointError, UsageError

if TYPE_CHECKING:
    from infra.targets.ports import Stack

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

            quiet_identity_log()
            self.credential = DefaultAzureCredential()
        try:
            token = self.credential.get_token(PROMETHEUS_SCOPE).token
        except Exception as exc:  # azure-identity raises its own errors per credential
            raise EndpointError(
                f"cannot query the Azure Monitor workspace: no Entra token ({summary(str(exc))})",
                hint="run `az login`; the account needs Monitoring Data Reader on the workspace",
            ) from None
        headers = {**request.headers, "Authorization": f"Bearer {token}"}
        return Request(request.method, request.url, headers, request.body)

    def describe(self) -> str:
        return "Entra ID credentials (Bearer token)"


class AksClient(KubernetesClient):
    """An aks workload; metrics through the Azure Monitor workspace's Prometheus API.

    Status and readiness need only Triton's URL; the workspace is asked for by metrics."""

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


@dataclass(frozen=True, kw_only=True)
class AksLocator(KubernetesLocator):
    """An aks workload: its stack, ``--url``, and its figures' query API: ``--prometheus-url``,
    or the Azure Monitor workspace's (the stack's ``prometheusQueryUrl`` output)."""

    @classmethod
    def stack_fields(cls, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, Any]:
        url = output_text(outputs, "prometheusQueryUrl")
        return {**super().stack_fields(stack, outputs), "prometheus_url": url}

    def client(self) -> AksClient:
        config = self.config()
        url = self.prometheus_url or "https://workspace-unknown" + WORKSPACE_HOST
        prometheus = PrometheusClient(url, auth_for(url))
        client = workload_client(AksClient, self.target, config, prometheus, self.url)
        client.workspace_missing = not self.prometheus_url
        return client


LOCATOR = AksLocator
