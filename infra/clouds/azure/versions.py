"""The AKS Kubernetes version calendar: when each minor went GA and when it ends, and the
long-term-support (LTS) end for a cluster on the Premium tier.

Source: "AKS Kubernetes release calendar" and "LTS versions" tables of
MicrosoftDocs/azure-aks-docs ``articles/aks/supported-kubernetes-versions.md`` (the page
https://learn.microsoft.com/azure/aks/supported-kubernetes-versions), at commit fb060ab
(2026-08-21), read 2026-11-27. The page gives months: "unless an explicit date is provided, the
End of Life (EOL) date is the last day of the specified month"; a GA month is recorded as its
first day (the version was offered during that month). ``tdk doctor --online`` compares the
table with what AKS answers for the stack's region (``az aks get-versions``).
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from infra.facts import Source
from infra.facts.kubernetes import KEDA_RELEASES
from tdk.errors import ConfigError

SOURCE = Source(
    "https://learn.microsoft.com/azure/aks/supported-kubernetes-versions", dt.date(2026, 11, 27)
)
#: a default must stay supported at least this long (as the EKS default does)
DEFAULT_MARGIN_DAYS = 60


def _end(year: int, month: int, day: int | None = None) -> dt.date:
    """The page's "Mar 2026" is March 31, 2026; an explicit day is that day."""
    return dt.date(year, month, day or calendar.monthrange(year, month)[1])


@dataclass(frozen=True)
class AksVersion:
    """One AKS minor: GA (first day of its GA month), end of life (the last supported day),
    and the end of long-term support (LTS, Premium tier only)."""

    version: str
    ga: dt.date
    end_of_life: dt.date
    lts_end: dt.date

    def phase(self, today: dt.date) -> str:
        """``preview`` before GA, ``supported`` through its EOL day, ``lts`` through its LTS
        end (Premium tier clusters only), else ``ended``."""
        if today < self.ga:
            return "preview"
        if today <= self.end_of_life:
            return "supported"
        return "lts" if today <= self.lts_end else "ended"


# fmt: off
VERSIONS: tuple[AksVersion, ...] = (
    AksVersion("1.30", dt.date(2024, 7, 1), _end(2025, 8, 22), _end(2026, 7)),
    AksVersion("1.31", dt.date(2024, 11, 1), _end(2025, 11, 1), _end(2026, 11)),
    AksVersion("1.32", dt.date(2025, 4, 1), _end(2026, 3), _end(2027, 3)),
    AksVersion("1.33", dt.date(2025, 6, 1), _end(2026, 7), _end(2027, 7)),
    AksVersion("1.34", dt.date(2025, 11, 1), _end(2026, 11), _end(2027, 11)),
    AksVersion("1.35", dt.date(2026, 3, 1), _end(2027, 3), _end(2028, 3)),
    AksVersion("1.36", dt.date(2026, 6, 1), _end(2027, 6), _end(2028, 6)),
    AksVersion("1.37", dt.date(2026, 10, 1), _end(2027, 10), _end(2028, 10)),
)
# fmt: on
BY_VERSION = {v.version: v for v in VERSIONS}


def offered(today: dt.date, lts: bool) -> tuple[str, ...]:
    """The minors a new cluster may run on ``today`` (LTS adds those past EOL but in LTS)."""
    phases = ("supported", "lts") if lts else ("supported",)
    return tuple(v.version for v in VERSIONS if v.phase(today) in phases)


def default(today: dt.date, fits: tuple[str, ...] | None = None) -> str:
    """The newest GA minor supported for 60+ more days (among ``fits`` when given: the minors
    the kit's KEDA table supports)."""
    horizon = today + dt.timedelta(days=DEFAULT_MARGIN_DAYS)
    found = [
        v
        for v in VERSIONS
        if v.ga <= today and v.end_of_life >= horizon and (fits is None or v.version in fits)
    ]
    if not found:
        raise ConfigError(
            f"no AKS version in the kit's calendar ({SOURCE.url}, checked {SOURCE.checked}) "
            f"stays supported until {horizon}",
            hint="update infra/clouds/azure/versions.py from that page, or set "
            "aksKubernetesVersion explicitly",
        )
    return max(found, key=lambda v: v.ga).version


def keda_minors() -> tuple[str, ...]:
    """The Kubernetes minors some KEDA chart of the kit's table supports (the default must be
    one: the cluster runs the KEDA Helm chart, infra/facts/kubernetes.py)."""
    minors = {m for r in KEDA_RELEASES for m in range(r.low, r.high + 1)}
    return tuple(f"1.{m}" for m in sorted(minors))


def drift(answer: Mapping[str, object]) -> list[str]:
    """What ``az aks get-versions -l REGION -o json`` (its ``values[].version`` and
    ``isPreview``) lists that the calendar does not: a GA minor the table lacks."""
    out = []
    values = answer.get("values", [])
    for row in values if isinstance(values, list) else []:
        if not isinstance(row, dict):
            continue
        version, preview = str(row.get("version", "")), bool(row.get("isPreview"))
        if version and not preview and version not in BY_VERSION:
            out.append(f"AKS offers {version} (GA); the kit's calendar lacks it")
    return out
