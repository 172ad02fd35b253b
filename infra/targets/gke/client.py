"""Operations on a deployed gke stack: figures from Google Managed Prometheus, Triton readiness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.clients.prometheus import NoAuth, PrometheusClient
from infra.k8s.client import KubernetesClient, KubernetesLocator, workload_client
from infra.targets.gke.builders import managed_prometheus_url
from infra.targets.gke.query_auth import GoogleBearer


class GkeClient(KubernetesClient):
    """A gke workload; metrics through GMP's Prometheus-compatible query API."""


def gmp_client(project: str, credentials: Any | None = None) -> PrometheusClient:
    """GMP's query API for ``project`` with Google credentials (ADC when None)."""
    return PrometheusClient(managed_prometheus_url(project), GoogleBearer(credentials))


@dataclass(frozen=True, kw_only=True)
class GkeLocator(KubernetesLocator):
    """A gke workload: its stack (the GCP project whose GMP holds its figures), ``--url``,
    ``--prometheus-url``."""

    def client(self) -> GkeClient:
        config = self.config()
        if self.prometheus_url:
            prometheus = PrometheusClient(self.prometheus_url, NoAuth())
        else:
            prometheus = gmp_client(config.project)
        return workload_client(GkeClient, self.target, config, prometheus, self.url)


LOCATOR = GkeLocator
