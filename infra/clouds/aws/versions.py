"""The EKS Kubernetes version calendar (release, end of standard and of extended support), the
price of extended support, the default version, and ``tdk doctor --online``'s check of the
calendar against what EKS itself answers (``DescribeClusterVersions``): a version AWS offers that
the table lacks (a new user would get last season's default), or an end of support that moved."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from infra.facts import Source
from infra.facts.kubernetes import minor
from tdk.errors import ConfigError

D = dt.date

EKS_VERSIONS_SOURCE = Source(
    "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html",
    dt.date(2026, 11, 26),
)
EKS_PRICE_SOURCE = Source("https://aws.amazon.com/eks/pricing/")
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
            hint="update infra/clouds/aws/versions.py from that page (`tdk doctor` lists what "
            "aged), or set eksKubernetesVersion explicitly",
        )
    return max(fits, key=lambda v: v.released).version


API = "eks:DescribeClusterVersions"


def _day(value: Any) -> dt.date | None:
    """An API timestamp as the UTC day the table records (AWS answers 16:00-08:00 the day
    before for a UTC midnight)."""
    if not isinstance(value, dt.datetime):
        return None
    return value.astimezone(dt.UTC).date() if value.tzinfo else value.date()


def describe(client: Any) -> list[dict[str, Any]]:
    """Every EKS cluster version the API lists (all pages)."""
    found: list[dict[str, Any]] = []
    token = None
    while True:
        page = client.describe_cluster_versions(
            clusterType="eks", includeAll=True, **({"nextToken": token} if token else {})
        )
        found += page.get("clusterVersions", [])
        token = page.get("nextToken")
        if not token:
            return found


def drift(answer: list[dict[str, Any]]) -> list[str]:
    """What the API says that the kit's calendar (above) does not."""
    out = []
    for row in sorted(answer, key=lambda r: minor(str(r.get("clusterVersion", "1.0")))):
        version = str(row.get("clusterVersion", ""))
        ours = EKS_BY_VERSION.get(version)
        status = str(row.get("status", ""))
        standard = _day(row.get("endOfStandardSupportDate"))
        if ours is None:
            if status in ("STANDARD_SUPPORT", "EXTENDED_SUPPORT"):
                out.append(f"EKS offers {version} ({status}, standard support until "
                           f"{standard}); the kit's calendar lacks it")  # fmt: skip
            continue
        extended = _day(row.get("endOfExtendedSupportDate"))
        if standard is not None and standard != ours.standard_end:
            out.append(f"{version}: standard support ends {standard} per EKS, "
                       f"{ours.standard_end} in the kit")  # fmt: skip
        if extended is not None and extended != ours.extended_end:
            out.append(f"{version}: extended support ends {extended} per EKS, "
                       f"{ours.extended_end} in the kit")  # fmt: skip
    return out
