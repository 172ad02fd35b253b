"""Operations on a deployed eks stack: figures from Amazon Managed Prometheus, Triton readiness."""

from __future__ import annotations

from typing import Any

from infra.clients.prometheus import NoAuth, PrometheusClient, SigV4
from infra.targets.eks.builders import amp_query_url
from infra.targets.k8s_client import KubernetesClient, stack_config
from infra.targets.operations import Locator


class EksClient(KubernetesClient):
    """An eks workload; metrics through AMP's Prometheus-compatible query API (SigV4)."""

    target = "eks"


def amp_client(region: str, workspace_id: str, credentials: Any | None = None) -> PrometheusClient:
    """AMP's query API for one workspace, SigV4-signed (the AWS SDK's chain when None)."""
    return PrometheusClient(amp_query_url(region, workspace_id), SigV4(region, credentials))


def from_locator(where: Locator) -> EksClient:
    config = stack_config(where, "eks")
    if where.prometheus_url:
        prometheus = PrometheusClient(where.prometheus_url, NoAuth())
    else:
        workspace = where.need(
            "workspace_id",
            "eks",
            "--workspace-id",
            "pass the AMP workspace: `pulumi stack output ampWorkspaceId`",
        )
        prometheus = amp_client(where.region or config.region, workspace)
    return EksClient(config.workload.namespace, config.common.name, prometheus, where.url)
