"""EKS Kubernetes versions and the add-on versions that fit each Kubernetes minor."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from infra.facts import Source
from tdk.errors import ConfigError

D = dt.date

EKS_VERSIONS_SOURCE = Source(
    "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html",
    dt.date(2026, 11, 26),
)
EKS_PRICE_SOURCE = Source("https://aws.amazon.com/eks/pricing/")
KEDA_SOURCE = Source("https://keda.sh/docs/latest/operate/cluster/#kubernetes-compatibility")
AUTOSCALER_SOURCE = Source(
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/README.md"
)
DEVICE_PLUGIN_SOURCE = Source("https://github.com/NVIDIA/k8s-device-plugin/releases")

#: USD per cluster hour (EKS pricing page)
STANDARD_HOURLY_USD = 0.10
EXTENDED_HOURLY_USD = 0.60
HOURS_PER_MONTH = 730
#: the default must stay in standard support at least this long
DEFAULT_MARGIN_DAYS = 60


@dataclass(frozen=True)
class EksVersion:
    """One EKS Kubernetes version: release, end of standard and of extended support."""

    version: str
    released: dt.date
    standard_end: dt.date
    extended_end: dt.date

    def phase(self, today: dt.date) -> str:
        """``standard``, ``extended`` or ``ended`` on ``today``.

        An end date is the first day out (AWS: on the end-of-support date no new cluster of the
        version can be created), so on ``standard_end`` the version is already in extended
        support and on ``extended_end`` it has ended.
        """
        if today < self.standard_end:
            return "standard"
        return "extended" if today < self.extended_end else "ended"


#: the EKS Kubernetes release calendar (EKS_VERSIONS_SOURCE, re-checked 2026-11-26: 1.31 ends
#: extended support on 2026-11-26, 1.32 standard support on 2026-03-23, ...; 1.34's end of
#: standard support 2026-12-02 re-checked 2026-11-27 in awsdocs/amazon-eks-user-guide
#: latest/ug/versioning/kubernetes-versions.adoc). 1.37: no EKS release date found in the
#: sources checked on 2026-11-27, so no row: the user guide's stored copies (newest row 1.36),
#: awslabs/amazon-eks-ami (snapshot of 2026-07-24, release v20260714: AMIs up to 1.36),
#: kubernetes/autoscaler (a cluster-autoscaler-release-1.37 branch, no 1.37.x tag, snapshot of
#: 2026-08-22) and KEDA (v2.22, its first candidate for 1.37: "TBD"); botocore's EKS model
#: lists no versions. `tdk doctor --online` asks EKS (DescribeClusterVersions) and names a
#: version EKS offers that this table lacks.
EKS_VERSIONS: tuple[EksVersion, ...] = (
    EksVersion("1.31", D(2024, 9, 26), D(2025, 11, 26), D(2026, 11, 26)),
    EksVersion("1.32", D(2025, 1, 23), D(2026, 3, 23), D(2027, 3, 23)),
    EksVersion("1.33", D(2025, 5, 29), D(2026, 7, 29), D(2027, 7, 29)),
    EksVersion("1.34", D(2025, 10, 2), D(2026, 12, 2), D(2027, 12, 2)),
    EksVersion("1.35", D(2026, 1, 27), D(2027, 3, 27), D(2028, 3, 27)),
    EksVersion("1.36", D(2026, 6, 2), D(2027, 8, 2), D(2028, 8, 2)),
)
EKS_BY_VERSION = {v.version: v for v in EKS_VERSIONS}


def extended_monthly_extra_usd() -> float:
    """What extended support adds per cluster per month (about $365)."""
    return round((EXTENDED_HOURLY_USD - STANDARD_HOURLY_USD) * HOURS_PER_MONTH, 2)


def offered_eks_versions(today: dt.date) -> tuple[str, ...]:
    """Versions released and not past extended support on ``today``."""
    return tuple(
        v.version for v in EKS_VERSIONS if v.released <= today and v.phase(today) != "ended"
    )


def default_eks_version(today: dt.date) -> str:
    """The newest released version in standard support for at least 60 more days."""
    horizon = today + dt.timedelta(days=DEFAULT_MARGIN_DAYS)
    fits = [v for v in EKS_VERSIONS if v.released <= today and v.standard_end >= horizon]
    if not fits:
        raise ConfigError(
            f"no EKS version in the kit's table (from {EKS_VERSIONS_SOURCE.url}, checked "
            f"{EKS_VERSIONS_SOURCE.checked}) stays in standard support until {horizon}",
            hint="update infra/facts/kubernetes.py from that page (`tdk doctor` lists what aged), "
            "or set eksKubernetesVersion explicitly",
        )
    return max(fits, key=lambda v: v.released).version


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


#: GKE release channels: the Kubernetes minors each offers ("Available minor versions" of the
#: "Current versions" table, GKE_CHANNELS_SOURCE, re-checked 2026-11-27: Rapid 1.34 to 1.37,
#: Regular 1.34 to 1.36, Stable 1.34 to 1.35, Extended 1.31 to 1.36). EXTENDED keeps a minor
#: up to 24 months (extra cost past standard support). `tdk doctor --online` compares them
#: with GKE's getServerConfig.
GKE_CHANNELS_SOURCE = Source(
    "https://cloud.google.com/kubernetes-engine/docs/release-notes", dt.date(2026, 11, 27)
)
GKE_CHANNELS: dict[str, tuple[int, int]] = {
    "RAPID": (34, 37),
    "REGULAR": (34, 36),
    "STABLE": (34, 35),
    "EXTENDED": (31, 36),
}


def keda_for_channel(channel: str) -> AddonRelease:
    """The KEDA chart for a GKE release channel: the newest that supports the channel's newest
    minor (clusters are auto-upgraded up to it); where none does yet, the newest chart, and
    ``tdk doctor`` reports that the channel has passed its tested range."""
    newest = GKE_CHANNELS[channel][1]
    fits = [r for r in KEDA_RELEASES if r.supports(newest)]
    return fits[0] if fits else KEDA_RELEASES[0]


def device_plugin_for(kubernetes_version: str) -> AddonRelease:
    """The newest NVIDIA device plugin chart that supports the cluster's minor."""
    return _pick(DEVICE_PLUGIN_RELEASES, "device plugin", DEVICE_PLUGIN_SOURCE, kubernetes_version)
