"""Operations on a deployed eks stack: figures from Amazon Managed Prometheus, Triton readiness."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from infra.clients.prometheus import NoAuth, PrometheusClient
from infra.targets.eks.builders import amp_query_url
from infra.targets.eks.entry import ENTRY
from infra.targets.eks.query_auth import SigV4
from infra.targets.k8s.client import KubernetesClient, stack_config
from infra.targets.operations import Locator, Reading
from tdk.errors import UsageError

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

    target = ENTRY.name
    workspace_missing = False

    def metrics(self, window: timedelta | None) -> list[Reading]:
        if self.workspace_missing:
            raise UsageError("--target eks needs the AMP workspace for metrics", WORKSPACE_HINT)
        return super().metrics(window)


def amp_client(region: str, workspace_id: str, credentials: Any | None = None) -> PrometheusClient:
    """AMP's query API for one workspace, SigV4-signed (the AWS SDK's chain when None)."""
    return PrometheusClient(amp_query_url(region, workspace_id), SigV4(region, credentials))


def from_locator(where: Locator) -> EksClient:
    config = stack_config(where, ENTRY.name)
    if where.prometheus_url:
        prometheus = PrometheusClient(where.prometheus_url, NoAuth())
    else:
        workspace = where.workspace_id or "${ampWorkspaceId}"
        prometheus = amp_client(where.region or config.region, workspace)
    client = EksClient(config.workload.namespace, config.common.name, prometheus, where.url)
    client.workspace_missing = not where.prometheus_url and not where.workspace_id
    return client
