"""``tdk plan``: serving units, instances and dollars for a traffic profile (exact arithmetic).

A unit sustains ``unit_rps`` within the SLO; the autoscaler keeps each unit at ``safety``
of that (AWS's target-tracking guidance starts at 0.5), so ``rps`` needs
``max(1, ceil(rps / (unit_rps * safety)))`` units and ``ceil(units / units_per_instance)``
instances. Counts come from Decimal division and ceilings, never from summed floats. Each
traffic row is one equal interval: the average cost is the mean of the rows' costs.
"""

from __future__ import annotations

import csv
from decimal import Decimal, InvalidOperation
from pathlib import Path

from infra.planning.report import (
    Candidate,
    Option,
    PlanReport,
    Sample,
    check_safety,
    units_for,
)
from tdk.bounded import read_bounded
from tdk.errors import UsageError

#: the largest traffic plan accepts: far above any fleet, small enough for exact arithmetic
MAX_RPS = Decimal("1e12")


def plan(
    traffic: list[Sample],
    peak_rps: Decimal | None,
    candidates: list[Candidate],
    safety: Decimal,
    price_date: str,
) -> PlanReport:
    """Cost every candidate over ``traffic`` (constant at ``peak_rps`` when empty)."""
    if not traffic and peak_rps is None:
        raise UsageError("no traffic given", hint="pass --peak-rps N and/or --traffic FILE")
    check_safety(safety)
    if peak_rps is not None and peak_rps > MAX_RPS:
        raise UsageError(
            f"--peak-rps {peak_rps}: above the {MAX_RPS:E} inferences/s tdk plan can cost",
            hint="give the peak in inferences per second, e.g. --peak-rps 2500",
        )
    profile = traffic or [Sample("peak", peak_rps or Decimal(0))]
    peak = max(profile, key=lambda s: s.rps)
    if peak_rps is not None:
        peak = Sample("--peak-rps", peak_rps)
    trough = min(profile, key=lambda s: s.rps) if traffic else Sample("idle", Decimal(0))
    options = []
    for candidate in candidates:
        if candidate.unit_rps <= 0 or candidate.units_per_instance < 1:
            raise UsageError(
                f"{candidate.name}: a serving unit must sustain > 0 rps", hint="check the input"
            )
        units = [units_for(s.rps, candidate.unit_rps, safety) for s in profile]
        instances = [-(-u // candidate.units_per_instance) for u in units]
        options.append(Option(candidate, units, instances))
    return PlanReport(profile, peak, trough, safety, price_date, options)


def read_traffic(path: Path) -> list[Sample]:
    """A CSV of ``time,rps`` rows (a header row is allowed); one row per equal interval. Read
    bounded: a FIFO or a device is refused, not waited on forever."""
    try:
        text = read_bounded(path).decode("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}", hint="check --traffic") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--traffic {path} is not UTF-8 text ({exc.reason})", "save it as UTF-8 CSV"
        ) from None
    samples: list[Sample] = []
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2:
            raise UsageError(
                f"{path}:{number}: expected 2 columns (time,rps), got {len(row)}",
                hint="one row per interval, e.g. 00:00,120",
            )
        try:
            rps = Decimal(row[1].strip())
        except InvalidOperation:
            if number == 1:  # header
                continue
            raise UsageError(
                f"{path}:{number}: rps {row[1]!r} is not a number", hint="e.g. 00:00,120"
            ) from None
        if not rps.is_finite() or rps < 0 or rps > MAX_RPS:
            raise UsageError(
                f"{path}:{number}: rps {row[1]!r} must be between 0 and {MAX_RPS:E}",
                hint="fix the row",
            )
        samples.append(Sample(row[0].strip(), rps))
    if not samples:
        raise UsageError(f"{path}: no traffic rows", hint="rows of time,rps")
    return samples
