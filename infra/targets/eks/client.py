"""Operations on a deployed eks stack: figures from Amazon Managed Prometheus, Triton readiness."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from infra.clients.prometheus import NoAuth, PrometheusClient
from infra.k8s.client import KubernetesClient, KubernetesLocator, workload_client
from infra.targets.eks.builders import amp_query_url
from infra.targets.eks.query_auth import SigV4
from infra.targets.operations import Reading, option, output_text
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.targets.ports import Stack

#: what ``tdk metrics --target eks`` needs when neither the workspace nor a URL was given
WORKSPACE_HINT = (
    "with the pulumi CLI installed --stack reads it from the stack's outputs; else pass "
    "--outputs FILE (`pulumi stack output --json > FILE`), --workspace-id ID or "
    "--prometheus-url URL to `tdk metrics`"
)


class EksClient(KubernetesClient):
    """An eks workload; metrics through AMP's Prometheus-compatible query API (SigV4).

    Status and readiness need only Triton's URL; the AMP workspace is asked for by metrics.
    """

    workspace_missing = False

    def metrics(self, window: timedelta | None) -> list[Reading]:
        if self.workspace_missing:
            raise UsageError("--target eks needs the AMP workspace for metrics", WORKSPACE_HINT)
        return super().metrics(window)


def amp_client(region: str, workspace_id: str, credentials: Any | None = None) -> PrometheusClient:
    """AMP's query API for one workspace, SigV4-signed (the AWS SDK's chain when None)."""
    return PrometheusClient(amp_query_url(region, workspace_id), SigV4(region, credentials))


@dataclass(frozen=True, kw_only=True)
class EksLocator(KubernetesLocator):
    """An eks workload: its stack, ``--url``, and where its figures are: ``--prometheus-url``,
    or the AMP workspace (``--workspace-id``, the stack's ``ampWorkspaceId`` output) in
    ``--region`` (default: the stack's)."""

    region: str | None = option()
    workspace_id: str | None = option()

    @classmethod
    def stack_fields(cls, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, Any]:
        workspace = output_text(outputs, "ampWorkspaceId")
        return {**super().stack_fields(stack, outputs), "workspace_id": workspace}

    def client(self) -> EksClient:
        config = self.config()
        if self.prometheus_url:
            prometheus = PrometheusClient(self.prometheus_url, NoAuth())
        else:
            workspace = self.workspace_id or "${ampWorkspaceId}"
            prometheus = amp_client(self.region or config.region, workspace)
        client = workload_client(EksClient, self.target, config, prometheus, self.url)
        client.workspace_missing = not self.prometheus_url and not self.workspace_id
        return client


LOCATOR = EksLocator
