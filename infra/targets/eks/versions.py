"""``tdk doctor --online`` for EKS: the kit's Kubernetes calendar against what EKS itself
answers (``DescribeClusterVersions``): a version AWS offers that the table lacks (a new user
would get last season's default), or an end of support that moved."""

from __future__ import annotations

import datetime as dt
from typing import Any

from infra.facts import kubernetes as kf

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
    """What the API says that the kit's calendar (infra/facts/kubernetes.py) does not."""
    out = []
    for row in sorted(answer, key=lambda r: kf.minor(str(r.get("clusterVersion", "1.0")))):
        version = str(row.get("clusterVersion", ""))
        ours = kf.EKS_BY_VERSION.get(version)
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
