"""What the Kubernetes targets' registry entries share: their entry class and the plan port's
node-pool and KEDA bounds ``tdk plan`` writes (their locator, ``--stack`` and ``--url``, is
``infra.k8s.client``'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.entry import TargetEntry
from infra.targets.ports import PlanPort

if TYPE_CHECKING:
    from infra.planning.report import Option, PlanReport


class KubernetesEntry(TargetEntry):
    """A Triton Deployment on a GPU node pool, scaled by KEDA."""


class KubernetesPlan(PlanPort):
    """The plan port the Kubernetes targets share: a node pool bounded by ``node_keys`` and
    KEDA's replica bounds, sized to the report's trough and peak."""

    #: the stack keys bounding the GPU node pool (min, max)
    node_keys: ClassVar[tuple[str, str]]

    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        size = report.sizing(option)
        low, high = self.node_keys
        return {
            low: size.trough_instances,
            high: size.peak_instances,
            "k8sMinReplicas": size.trough_units,
            "k8sMaxReplicas": size.peak_units,
        }
