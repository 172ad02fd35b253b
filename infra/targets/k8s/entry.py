"""What the two Kubernetes targets' registry entries share: Triton found at ``--url`` (a load
balancer or ``kubectl port-forward``), the workload located by ``--stack``, and the node-pool
and KEDA bounds ``tdk plan`` writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.entry import TargetEntry
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.clients.base import InferenceTarget
    from infra.planning.report import Option, PlanReport
    from infra.targets.operations import Locator


class KubernetesEntry(TargetEntry):
    """A Triton Deployment on a GPU node pool, scaled by KEDA."""

    #: the stack keys bounding the GPU node pool (min, max)
    node_keys: ClassVar[tuple[str, str]]

    def inference(self, where: Locator, grpc: bool, timeout: float) -> InferenceTarget:
        """Triton's own HTTP (or gRPC) API at ``--url``; with ``--stack`` and no ``--url`` the
        client says how to port-forward to the stack's service."""
        if where.url:
            from infra.clients.triton_http import TritonHttpTarget

            return TritonHttpTarget(where.url, grpc, timeout)
        if not where.stack:
            raise UsageError(
                f"--target {self.name} needs --url, Triton's HTTP address (or --stack NAME)",
                hint="run `kubectl port-forward svc/<workload> 8000:8000` and pass "
                "--url http://127.0.0.1:8000",
            )
        return self.client(where).invoke(timeout)

    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        size = report.sizing(option)
        low, high = self.node_keys
        return {
            low: size.trough_instances,
            high: size.peak_instances,
            "k8sMinReplicas": size.trough_units,
            "k8sMaxReplicas": size.peak_units,
        }
