"""The add-on versions that fit each Kubernetes minor (KEDA, cluster autoscaler, NVIDIA device
plugin), whatever the cloud; each cloud's own calendar: ``infra/clouds/<cloud>/versions.py``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from infra.facts import Source
from tdk.errors import ConfigError

KEDA_SOURCE = Source("https://keda.sh/docs/latest/operate/cluster/#kubernetes-compatibility")
AUTOSCALER_SOURCE = Source(
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/README.md"
)
DEVICE_PLUGIN_SOURCE = Source("https://github.com/NVIDIA/k8s-device-plugin/releases")


def minor(version: str) -> int:
    """``1.33`` or ``v1.33.6`` -> 33."""
    return int(version.lstrip("v").split(".")[1])


@dataclass(frozen=True)
class AddonRelease:
    """A chart version and the Kubernetes minors (1.<low> to 1.<high>) it supports."""

    version: str
    low: int
    high: int
    #: image tag that must follow the cluster's minor (cluster autoscaler), else ""
    image_tag: str = ""

    def supports(self, kubernetes_minor: int) -> bool:
        return self.low <= kubernetes_minor <= self.high


#: KEDA Helm chart versions, newest first (keda.sh compatibility table); each minor at its
#: newest patch (github.com/kedacore/keda/releases: v2.20.2 2026-08, v2.18.3 2025-12; checked
#: 2026-11-26)
KEDA_RELEASES: tuple[AddonRelease, ...] = (
    AddonRelease("2.21.1", 34, 36),
    AddonRelease("2.20.2", 33, 35),
    AddonRelease("2.19.0", 32, 34),
    AddonRelease("2.18.3", 31, 33),
    AddonRelease("2.16.1", 29, 31),
)
#: KEDA's next minor and what its compatibility table says of it: "v2.22 | TBD" (keda.sh
#: docs/2.22/operate/cluster, re-checked 2026-11-27; kedacore/keda-docs main of 2026-08-20 still
#: read "v2.21 | TBD"): no KEDA release is tested with Kubernetes 1.37 yet
KEDA_NEXT = ("2.22", "TBD")
KEDA_NEXT_SOURCE = Source("https://keda.sh/docs/2.22/operate/cluster/", dt.date(2026, 11, 27))
#: cluster-autoscaler chart and image per Kubernetes minor (its README: the minor must match);
#: image tags at each minor's newest patch (kubernetes/autoscaler "CA: Update version.go to
#: 1.36.1" #10027 and its 1.35 / 1.34.5 / 1.33.6 siblings, 2026-07-22; checked 2026-11-26)
AUTOSCALER_RELEASES: tuple[AddonRelease, ...] = (
    AddonRelease("9.59.0", 36, 36, "v1.36.1"),
    AddonRelease("9.59.0", 35, 35, "v1.35.2"),
    AddonRelease("9.50.1", 34, 34, "v1.34.5"),
    AddonRelease("9.50.1", 33, 33, "v1.33.6"),
    AddonRelease("9.50.1", 32, 32, "v1.32.7"),
    AddonRelease("9.50.1", 31, 31, "v1.31.5"),
)
#: NVIDIA device plugin chart versions, newest first
DEVICE_PLUGIN_RELEASES: tuple[AddonRelease, ...] = (AddonRelease("0.20.0", 29, 36),)


def _pick(table: tuple[AddonRelease, ...], what: str, source: Source, version: str) -> AddonRelease:
    found = [r for r in table if r.supports(minor(version))]
    if not found:
        raise ConfigError(
            f"no {what} release in the kit's table supports Kubernetes {version}",
            hint=f"add one to infra/facts/kubernetes.py from {source.url}",
        )
    return found[0]


def keda_for(kubernetes_version: str) -> AddonRelease:
    """The newest KEDA chart that supports the cluster's minor."""
    return _pick(KEDA_RELEASES, "KEDA", KEDA_SOURCE, kubernetes_version)


def keda_pin(chart_version: str) -> AddonRelease | None:
    """The table row of a pinned KEDA chart version (None when the table does not know it)."""
    return next((r for r in KEDA_RELEASES if r.version == chart_version), None)


def autoscaler_for(kubernetes_version: str) -> AddonRelease:
    """The cluster-autoscaler chart and image tag matching the cluster's minor."""
    return _pick(AUTOSCALER_RELEASES, "cluster-autoscaler", AUTOSCALER_SOURCE, kubernetes_version)


def device_plugin_for(kubernetes_version: str) -> AddonRelease:
    """The newest NVIDIA device plugin chart that supports the cluster's minor."""
    return _pick(DEVICE_PLUGIN_RELEASES, "device plugin", DEVICE_PLUGIN_SOURCE, kubernetes_version)
