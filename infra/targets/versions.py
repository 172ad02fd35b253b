"""What the clouds support, and until when: dated facts with their sources, compared with today.

Pure data and functions (no Pulumi, no cloud SDK). Every table names the page it comes from and
the day it was checked; every decision takes ``on`` (today unless a caller or ``TDK_TODAY`` says
otherwise), so a default that was right when written cannot quietly age: the EKS default follows
the support calendar, add-on versions follow the cluster's minor, and ``tdk doctor`` reports what
has aged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from tdk.errors import ConfigError

CHECKED = date(2026, 11, 24)


@dataclass(frozen=True)
class Source:
    """Where a table comes from and when it was last compared with that page."""

    url: str
    checked: date = CHECKED

    def age_days(self, on: date) -> int:
        return (on - self.checked).days


def today() -> date:
    """Today, or ``TDK_TODAY`` (ISO date) to replay a stack against another calendar."""
    forced = os.environ.get("TDK_TODAY", "").strip()
    if not forced:
        return date.today()
    try:
        return date.fromisoformat(forced)
    except ValueError:
        raise ConfigError(
            f"TDK_TODAY is {forced!r}, not an ISO date", hint="e.g. TDK_TODAY=2027-01-31"
        ) from None


# ---- EKS Kubernetes versions ---------------------------------------------------------------

EKS_SOURCE = Source("https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html")
EKS_PRICE_SOURCE = Source("https://aws.amazon.com/eks/pricing/")
#: per cluster and hour, in standard and in extended support (EKS_PRICE_SOURCE)
STANDARD_USD_PER_HOUR = Decimal("0.10")
EXTENDED_USD_PER_HOUR = Decimal("0.60")
HOURS_PER_MONTH = 730
#: a default must stay in standard support at least this long after the stack is deployed
SUPPORT_MARGIN = timedelta(days=60)


@dataclass(frozen=True)
class EksVersion:
    """One EKS Kubernetes minor: released, end of standard support, end of extended support."""

    minor: str
    released: date
    standard_end: date
    extended_end: date

    def support(self, on: date) -> str:
        """``standard``, ``extended``, ``ended`` or ``unreleased`` on that day."""
        if on < self.released:
            return "unreleased"
        if on <= self.standard_end:
            return "standard"
        return "extended" if on <= self.extended_end else "ended"


EKS_VERSIONS: tuple[EksVersion, ...] = (
    EksVersion("1.31", date(2024, 9, 26), date(2025, 11, 26), date(2026, 11, 26)),
    EksVersion("1.32", date(2025, 1, 23), date(2026, 3, 23), date(2027, 3, 23)),
    EksVersion("1.33", date(2025, 5, 29), date(2026, 7, 29), date(2027, 7, 29)),
    EksVersion("1.34", date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2)),
    EksVersion("1.35", date(2026, 1, 27), date(2027, 3, 27), date(2028, 3, 27)),
    EksVersion("1.36", date(2026, 6, 2), date(2027, 8, 2), date(2028, 8, 2)),
)
_EKS = {v.minor: v for v in EKS_VERSIONS}


def eks_version(minor: str) -> EksVersion:
    try:
        return _EKS[minor]
    except KeyError:
        raise ConfigError(
            f"EKS Kubernetes {minor!r} is not in the kit's support calendar "
            f"(known: {', '.join(_EKS)}; {EKS_SOURCE.url}, checked {EKS_SOURCE.checked})",
            hint="pick a listed version, or leave eksKubernetesVersion at auto",
        ) from None


def eks_choices(on: date) -> tuple[str, ...]:
    """Versions a new cluster can be created with on that day (standard or extended)."""
    return tuple(v.minor for v in EKS_VERSIONS if v.support(on) in ("standard", "extended"))


def default_eks_version(on: date) -> str:
    """The newest version in standard support for at least ``SUPPORT_MARGIN`` more days."""
    fit = [v for v in EKS_VERSIONS if v.released <= on and v.standard_end - on >= SUPPORT_MARGIN]
    if not fit:
        raise ConfigError(
            f"no EKS version in the kit's calendar stays in standard support 60 days after {on}",
            hint=f"update infra/targets/versions.py from {EKS_SOURCE.url}",
        )
    return fit[-1].minor


def extended_monthly_extra_usd() -> Decimal:
    """What extended support adds to one cluster's monthly bill."""
    return (EXTENDED_USD_PER_HOUR - STANDARD_USD_PER_HOUR) * HOURS_PER_MONTH


def check_eks_support(minor: str, support_type: str, on: date) -> None:
    """Refuse a version past extended support, or in extended support without the opt-in."""
    version = eks_version(minor)
    state = version.support(on)
    if state in ("ended", "unreleased"):
        raise ConfigError(
            f"eksKubernetesVersion {minor} is {state} on {on} (standard support "
            f"{version.released} to {version.standard_end}, extended to {version.extended_end})",
            hint=f"use {default_eks_version(on)} (or leave eksKubernetesVersion at auto)",
        )
    if state == "extended" and support_type != "EXTENDED":
        raise ConfigError(
            f"eksKubernetesVersion {minor} left standard support on {version.standard_end}: "
            f"EKS would run it in extended support at ${EXTENDED_USD_PER_HOUR} instead of "
            f"${STANDARD_USD_PER_HOUR} per cluster hour (+${extended_monthly_extra_usd():.0f} "
            f"a month per cluster; {EKS_PRICE_SOURCE.url})",
            hint=f"use {default_eks_version(on)}, or opt in with "
            "`pulumi config set triton-deploy-kit:eksSupportType EXTENDED`",
        )


# ---- Cluster add-ons per Kubernetes minor ----------------------------------------------------

KEDA_SOURCE = Source("https://keda.sh/docs/latest/operate/cluster/#kubernetes-compatibility")
AUTOSCALER_SOURCE = Source(
    "https://github.com/kubernetes/autoscaler/tree/master/cluster-autoscaler#releases"
)
DEVICE_PLUGIN_SOURCE = Source("https://github.com/NVIDIA/k8s-device-plugin/releases")


@dataclass(frozen=True)
class AddonRelease:
    """A pinned Helm chart (or image) version and the Kubernetes minors it supports."""

    version: str
    minors: tuple[str, ...]


#: KEDA chart version == KEDA version; each supports three Kubernetes minors (KEDA_SOURCE)
KEDA_RELEASES: tuple[AddonRelease, ...] = (
    AddonRelease("2.16.1", ("1.29", "1.30", "1.31")),
    AddonRelease("2.17.0", ("1.30", "1.31", "1.32")),
    AddonRelease("2.18.0", ("1.31", "1.32", "1.33")),
    AddonRelease("2.19.0", ("1.32", "1.33", "1.34")),
    AddonRelease("2.20.0", ("1.33", "1.34", "1.35")),
    AddonRelease("2.21.1", ("1.34", "1.35", "1.36")),
)
#: the cluster-autoscaler chart; its image's minor must equal the cluster's (AUTOSCALER_SOURCE)
AUTOSCALER_CHART_VERSION = "9.59.0"
AUTOSCALER_IMAGES: tuple[AddonRelease, ...] = (
    AddonRelease("v1.31.5", ("1.31",)),
    AddonRelease("v1.32.7", ("1.32",)),
    AddonRelease("v1.33.6", ("1.33",)),
    AddonRelease("v1.34.5", ("1.34",)),
    AddonRelease("v1.35.0", ("1.35",)),
    AddonRelease("v1.36.0", ("1.36",)),
)
#: the NVIDIA device plugin chart (DEVICE_PLUGIN_SOURCE); its releases support every minor here
DEVICE_PLUGIN_RELEASES: tuple[AddonRelease, ...] = (
    AddonRelease("0.20.0", tuple(v.minor for v in EKS_VERSIONS)),
)


def addon_for(name: str, releases: tuple[AddonRelease, ...], source: Source, minor: str) -> str:
    """The newest release of an add-on that supports ``minor``; ConfigError if none does."""
    fits = [r.version for r in releases if minor in r.minors]
    if not fits:
        raise ConfigError(
            f"no {name} release the kit knows supports Kubernetes {minor} "
            f"({source.url}, checked {source.checked})",
            hint="pick a Kubernetes version the add-on supports",
        )
    return fits[-1]


def keda_version(minor: str) -> str:
    return addon_for("KEDA", KEDA_RELEASES, KEDA_SOURCE, minor)


def autoscaler_image(minor: str) -> str:
    return addon_for("cluster-autoscaler", AUTOSCALER_IMAGES, AUTOSCALER_SOURCE, minor)


def device_plugin_version(minor: str) -> str:
    return addon_for("NVIDIA device plugin", DEVICE_PLUGIN_RELEASES, DEVICE_PLUGIN_SOURCE, minor)


def newest_keda() -> str:
    """GKE's release channels move the cluster's minor on their own: the newest KEDA, whose
    range is the newest minors (``tdk doctor`` says when the table ages)."""
    return KEDA_RELEASES[-1].version
