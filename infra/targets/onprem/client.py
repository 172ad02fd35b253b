"""Operations on a deployed onprem stack: figures from the cluster's own Prometheus (no auth;
``--prometheus-url``, e.g. through ``kubectl port-forward``, else the stack's
``onpremPrometheusUrl``, an in-cluster address), Triton readiness."""

from __future__ import annotations

from dataclasses import dataclass

from infra.clients.prometheus import NoAuth, PrometheusClient
from infra.k8s.client import KubernetesClient, KubernetesLocator, workload_client


class OnpremClient(KubernetesClient):
    """An onprem workload; metrics through the cluster's Prometheus."""


@dataclass(frozen=True, kw_only=True)
class OnpremLocator(KubernetesLocator):
    """An onprem workload: its stack, ``--url``, ``--prometheus-url`` (the stack's
    ``onpremPrometheusUrl`` when not given: reachable from inside the cluster)."""

    def client(self) -> OnpremClient:
        config = self.config()
        url = self.prometheus_url or config.prometheus_url
        prometheus = PrometheusClient(url, NoAuth())
        return workload_client(OnpremClient, self.target, config, prometheus, self.url)


LOCATOR = OnpremLocator
