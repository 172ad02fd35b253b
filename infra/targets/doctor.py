"""``tdk doctor`` for one stack, with what the registered targets know: their clouds, the kit's
price tables and the one stack read path, handed to ``infra.facts.doctor`` (which names no
target and never asks the registry)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from infra.facts.doctor import DoctorNeeds
from infra.facts.doctor import diagnose as diagnose_with
from infra.facts.findings import Finding


def needs() -> DoctorNeeds:
    """The registered targets' clouds, the kit's prices and the stack read path."""
    from infra.targets import catalogs, registry, stacks

    clouds = [e.cloud for e in registry.entries() if e.cloud is not None]
    return DoctorNeeds(clouds, catalogs.prices(), stacks.load_stack)


def diagnose(project_dir: Path, stack: str, today: dt.date, online: bool = False) -> list[Finding]:
    """Every finding for ``stack`` (``infra.facts.doctor.diagnose`` with ``needs()``)."""
    return diagnose_with(project_dir, stack, today, needs(), online)
