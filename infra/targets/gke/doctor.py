"""What ``tdk doctor`` reports for a gke stack: the KEDA chart its release channel gets, and
its Triton image."""

from __future__ import annotations

import datetime as dt

from infra.clouds.gcp import versions as gke
from infra.facts import kubernetes as kf
from infra.facts.findings import UNVERIFIED, Finding, image_findings
from infra.targets.gke.config import GkeConfig


def channel_finding(channel: str) -> Finding:
    """The KEDA chart a GKE release channel gets, against the minors the channel offers."""
    low, high = gke.GKE_CHANNELS[channel]
    row = gke.keda_for_channel(channel)
    status, note = (
        UNVERIFIED,
        f"{channel} offers 1.{low}-1.{high}; the chart is tested with 1.{row.low}-1.{row.high} "
        "(the kit's tables)",
    )
    if high > row.high:
        status = "aged"
        version, tested = kf.KEDA_NEXT
        note += (
            f": clusters upgraded to 1.{high} run KEDA untested; KEDA's table gives no chart "
            f"for it yet (v{version}: {tested}, {kf.KEDA_NEXT_SOURCE.url}, checked "
            f"{kf.KEDA_NEXT_SOURCE.checked}): unverified until it does"
        )
    src = gke.GKE_CHANNELS_SOURCE
    return Finding("keda chart (release channel)", row.version, src.url, str(src.checked),
                   status, note)  # fmt: skip


def findings(config: GkeConfig, today: dt.date) -> list[Finding]:
    return [channel_finding(config.release_channel), *image_findings(config.workload.image, today)]
