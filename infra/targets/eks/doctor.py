"""What ``tdk doctor`` reports for an eks stack: its Kubernetes version against the EKS
calendar, the add-on charts against that version, and its Triton image."""

from __future__ import annotations

import datetime as dt

from infra.clouds.aws import versions as eks
from infra.facts.findings import HAND, UNVERIFIED, Finding, chart_findings, image_findings
from infra.targets.eks.config import EksConfig


def version_finding(version: str, support: str, today: dt.date) -> Finding:
    """The cluster's version in the EKS calendar: ended is broken, extended support is aged
    (broken unless the stack opted in), near its standard end is aged."""
    row = eks.EKS_BY_VERSION[version]
    left = (row.standard_end - today).days
    phase = row.phase(today)
    status, note = UNVERIFIED, f"standard support ends {row.standard_end} ({left} days){HAND}"
    if phase == "ended":
        status, note = "broken", f"extended support ended {row.extended_end}"
    elif phase == "extended":
        status = "aged" if support == "EXTENDED" else "broken"
        note = (
            f"in extended support until {row.extended_end}: about "
            f"${eks.extended_monthly_extra_usd():.0f} more a month"
        )
    elif left < eks.DEFAULT_MARGIN_DAYS:
        status, note = "aged", f"standard support ends in {left} days ({row.standard_end})"
    src = eks.EKS_VERSIONS_SOURCE
    return Finding("Kubernetes version", version, src.url, str(src.checked), status, note)


def findings(config: EksConfig, today: dt.date) -> list[Finding]:
    version = config.kubernetes_version
    return [
        version_finding(version, config.support_type, today),
        *chart_findings(version, config.keda_version),
        *image_findings(config.workload.image, today),
    ]
