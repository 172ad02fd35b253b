"""What the Kubernetes targets' operation clients share: PromQL figures, Triton readiness,
invoke, and the locator (``KubernetesLocator``: ``--stack``, ``--url``, ``--prometheus-url``).

Metrics come from the cluster's managed Prometheus (the same ``promql.figures`` the dashboards
chart); status and wait read the Deployment's pods with kubectl (``infra.k8s.pods``: Ready
counts, CrashLoopBackOff with the last termination message, Pending) and ask Triton's
``/v2/health/ready`` and repository index through a URL the user can reach (a load balancer, or
``kubectl port-forward``).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from infra.clients.base import InferenceTarget
from infra.clients.deadline import DEFAULT_TIMEOUT_S
from infra.clients.prometheus import PrometheusClient
from infra.k8s import promql
from infra.k8s.pods import PodReadiness, read_pods
from infra.k8s.spec import triton_selector
from infra.targets.operations import (
    Locator,
    OnChange,
    Reading,
    Status,
    TargetClient,
    http_probe,
    load_failures,
    option,
    poll_until_ready,
)
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.clients.generate import Generator
    from infra.targets.ports import Stack
    from packager.manifest import ManifestModel

READY_PATH = "/v2/health/ready"
#: Triton's repository index: every model with its state and, when unavailable, the reason
INDEX_PATH = "/v2/repository/index"


def repository_failures(url: str, timeout: float = 10.0) -> dict[str, str] | None:
    """Models Triton at ``url`` could not load -> its reason (None: the index is unreachable)."""
    request = urllib.request.Request(f"{url}{INDEX_PATH}", data=b"{}", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            index = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if not isinstance(index, list):
        return None
    return {
        f"{m.get('name')}" + (f" v{m['version']}" if m.get("version") else ""): str(
            m.get("reason") or "no reason given"
        )
        for m in index
        if isinstance(m, dict) and m.get("state") == "UNAVAILABLE"
    }


def prom_duration(window: timedelta) -> str:
    """A PromQL range duration (``90s``), at least 1 m so rates see two scrapes."""
    return f"{max(int(window.total_seconds()), 60)}s"


class KubernetesClient(TargetClient, partial=True):
    """A Triton workload (``namespace``/``job``) read through a Prometheus query API."""

    def __init__(
        self,
        target: str,
        namespace: str,
        job: str,
        prometheus: PrometheusClient,
        url: str | None,
        multi_model: bool = False,
    ) -> None:
        self.target = target
        self.namespace = namespace
        self.job = job
        self.prometheus = prometheus
        self.url = url.rstrip("/") if url else None
        #: ``k8sModelMode: mme``: ``--url`` is a front (ready at ``/ping``), and the figures
        #: include SageMaker's six multi-model metrics
        self.multi_model = multi_model
        self.ready_path = "/ping" if multi_model else READY_PATH

    def where(self) -> dict[str, str | None]:
        return {
            "endpoint": self.job,
            "namespace": self.namespace,
            "prometheus": self.prometheus.base_url,
            "url": self.url,
        }

    def _triton_url(self) -> str:
        if not self.url:
            raise UsageError(
                f"--target {self.target} needs --url, Triton's HTTP address",
                hint=f"run `kubectl port-forward -n {self.namespace} svc/{self.job} 8000:8000` "
                "and pass --url http://127.0.0.1:8000",
            )
        return self.url

    def invoke(self, timeout: float = DEFAULT_TIMEOUT_S) -> InferenceTarget:
        from infra.clients.triton_http import TritonHttpTarget

        return TritonHttpTarget(self._triton_url(), timeout=timeout)

    def metrics(self, window: timedelta | None) -> list[Reading]:
        span = prom_duration(window) if window is not None else promql.WINDOW
        readings = []
        figures = promql.figures(self.namespace, self.job, span)
        if self.multi_model:
            figures |= promql.multi_model_figures(self.namespace, self.job, span)
        units = promql.UNITS | promql.MULTI_MODEL_UNITS
        for title, query in figures.items():
            key = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
            value = self.prometheus.value(query)
            unit = units[title]
            readings.append(Reading(key, title, value, unit, query))
        return [*readings, self._load_failures()]

    def _load_failures(self) -> Reading:
        """Models Triton reports UNAVAILABLE in its repository index (needs ``--url``)."""
        found = repository_failures(self.url) if self.url else None
        if found is None:
            where = f"{self.url}{INDEX_PATH} unreachable" if self.url else "needs --url"
            return load_failures(None, f"Triton {INDEX_PATH} ({where})")
        return load_failures(float(len(found)), f"Triton {INDEX_PATH} at {self.url}")

    def pods(self) -> PodReadiness | str:
        """The workload's pods as kubectl reports them (a string: why they were not read)."""
        return read_pods(self.namespace, triton_selector(self.job))

    def status(self) -> Status:
        pods = self.pods()
        details: dict[str, Any] = {"url": self.url, "namespace": self.namespace,
                                   "workload": self.job}  # fmt: skip
        details["pods"] = pods if isinstance(pods, str) else pods.summary()
        if isinstance(pods, PodReadiness) and pods.problems:
            details["pod_problems"] = [p.as_dict() for p in pods.problems]
        if isinstance(pods, PodReadiness) and pods.stuck:
            failure = "; ".join(str(p) for p in pods.stuck)
            if pods.ready:  # a stuck rollout: the previous pods serve on, nothing rolls back
                failure += f" ({pods.ready} other pod(s) Ready and serving)"
            return self._status(pods.stuck[0].reason, failure, details, final=True)
        if self.url is None and isinstance(pods, PodReadiness):
            return self._pods_status(pods, details)
        return self._triton_status(self._triton_url(), pods, details)

    def _status(
        self, state: str, failure: str | None, details: dict[str, Any], final: bool = False
    ) -> Status:
        rows = details.get("pod_problems", [])
        return Status(self.target, self.job, state, state == "Ready", failure, details, rows,
                      final, rows_title="pods that do not serve")  # fmt: skip

    def _pods_status(self, pods: PodReadiness, details: dict[str, Any]) -> Status:
        """Readiness from the pods alone (no ``--url``): a Ready pod passed Triton's probe."""
        details["triton"] = "not asked: pass --url for its readiness and failed models"
        if pods.ready:
            return self._status("Ready", None, details)
        failure = "; ".join(str(p) for p in pods.problems) or (
            "no pod is Ready yet" if pods.not_ready else "no pod of the workload exists"
        )
        return self._status("NotReady" if pods.not_ready else "NoPods", failure, details)

    def _triton_status(self, url: str, pods: PodReadiness | str, details: dict[str, Any]) -> Status:
        problems = "" if isinstance(pods, str) else "; ".join(str(p) for p in pods.problems)
        also = f" ({problems})" if problems else ""
        code = http_probe(f"{url}{self.ready_path}")
        if isinstance(code, OSError):
            return self._status("Unreachable", f"{code}{also}", details)
        if code == 200:
            return self._status("Ready", None, details)
        failed = repository_failures(url)
        if failed:
            details["failed"] = failed
            reasons = "; ".join(f"{name}: {why}" for name, why in failed.items())
            failure = f"{len(failed)} model(s) failed to load: {reasons}"
            return self._status("Failed", failure, details, final=True)
        failure = f"{self.ready_path} answered {code}: models still loading, or one failed{also}"
        return self._status("NotReady", failure, details)

    def wait(self, timeout: float, interval: float, on_change: OnChange) -> Status:
        return poll_until_ready(self.status, timeout, interval, on_change)


KindT = TypeVar("KindT", bound=KubernetesClient)


def workload_client(
    kind: type[KindT], target: str, config: Any, prometheus: PrometheusClient, url: str | None
) -> KindT:
    """A Kubernetes target's client of the workload its stack ``config`` deploys: the stack's
    namespace and name, ``url`` (Triton or the mme front) and whether it runs ``mme``."""
    workload = config.workload
    return kind(
        target, workload.namespace, config.common.name, prometheus, url, workload.mme is not None
    )


@dataclass(frozen=True, kw_only=True)
class KubernetesLocator(Locator):
    """A Kubernetes target's workload: the committed ``--stack`` (namespace, workload name,
    the cloud it runs in), Triton's ``--url`` and a ``--prometheus-url`` to read instead of
    the cloud's managed Prometheus. Each target adds what its metrics query needs."""

    #: the stack ``--stack`` named (None: only ``--url`` was given)
    stack: Stack | None = field(default=None, compare=False, repr=False)
    #: Triton's HTTP URL (a load balancer, or ``kubectl port-forward``)
    url: str | None = option()
    #: a Prometheus query API to read instead of the managed one (no auth)
    prometheus_url: str | None = option()

    @classmethod
    def stack_fields(cls, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().stack_fields(stack, outputs), "stack": stack}

    def config(self) -> Any:
        """The validated config of the committed ``--stack``."""
        target = self.target
        if self.stack is None:
            raise UsageError(
                f"--target {target} needs --stack",
                hint=f"pass the {target} stack, e.g. --stack {target}-dev",
            )
        return self.stack.config

    def inference(self, grpc: bool, timeout: float) -> InferenceTarget:
        """Triton's own HTTP (or gRPC) API at ``--url``; with ``--stack`` and no ``--url`` the
        client says how to port-forward to the stack's service."""
        if self.url:
            from infra.clients.triton_http import TritonHttpTarget

            return TritonHttpTarget(self.url, grpc, timeout)
        if self.stack is None:
            raise UsageError(
                f"--target {self.target} needs --url, Triton's HTTP address (or --stack NAME)",
                hint="run `kubectl port-forward svc/<workload> 8000:8000` and pass "
                "--url http://127.0.0.1:8000",
            )
        return self.client().invoke(timeout)

    def generator(self, model: ManifestModel, timeout: float) -> Generator | None:
        """Triton's generate endpoint at ``--url`` (None without it: the stack's client)."""
        from infra.clients.generate import GenerateClient

        return GenerateClient(self.url, model.name, timeout) if self.url else None
