"""What ``tdk doctor`` reports for an aks stack: its Kubernetes version against the AKS
calendar, the add-on charts against that version, its Triton image; and, with ``--online``,
the calendar against ``az aks get-versions`` for the stack's region."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from infra.clouds.azure import versions
from infra.clouds.azure.machine import az_json
from infra.facts.findings import HAND, UNVERIFIED, Finding, chart_findings, image_finding

if TYPE_CHECKING:
    from infra.targets.aks.config import AksConfig

API = "az aks get-versions"


def version_drift(location: str, run: Callable[[list[str]], str] = az_json) -> list[str]:
    """The calendar against ``az aks get-versions --location LOCATION`` (a network call)."""
    answer = json.loads(run(["aks", "get-versions", "--location", location]))
    return versions.drift(answer if isinstance(answer, dict) else {})


def version_finding(version: str, today: dt.date) -> Finding:
    """The cluster's version in the AKS calendar: past its end of life is broken, within 60
    days of it aged."""
    row = versions.BY_VERSION[version]
    left = (row.end_of_life - today).days
    status, note = UNVERIFIED, f"supported until {row.end_of_life} ({left} days){HAND}"
    if row.phase(today) in ("lts", "ended"):
        status, note = "broken", f"AKS support ended {row.end_of_life} (LTS needs Premium)"
    elif left < versions.DEFAULT_MARGIN_DAYS:
        status, note = "aged", f"AKS support ends in {left} days ({row.end_of_life})"
    src = versions.SOURCE
    return Finding("Kubernetes version", version, src.url, str(src.checked), status, note)


def findings(config: AksConfig, today: dt.date) -> list[Finding]:
    version = config.kubernetes_version
    # AKS scales its node pools itself: no cluster-autoscaler chart is installed
    charts = chart_findings(version, config.keda_version)
    installed = [f for f in charts if not f.fact.startswith("cluster-autoscaler")]
    image = image_finding(config.workload.image, today)
    return [version_finding(version, today), *installed, image]
