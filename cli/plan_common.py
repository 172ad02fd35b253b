"""What ``tdk plan`` does alike for request and token measurements: the
fleet over a traffic profile (``infra.perf.plan.capacity``), inference components vs MME, and the
tables and warnings people read. Token units go through the same code in output tokens/s."""

from __future__ import annotations

from decimal import Decimal, DecimalException
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from cli.output import Output
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.perf.plan.measurement import Measurement
    from infra.perf.plan.token_bench import TokenMeasurement
    from infra.planning.pricing import PriceTable
    from infra.planning.report import Candidate, PlanReport, Sample
    from infra.targets.ports import PlanPort


def price_tables(path: Path | None, port: PlanPort) -> tuple[PriceTable, PriceTable]:
    """(the table ``port``'s candidates are priced from, the one a ``--baseline`` or a
    component is): ``--prices`` for both when given, else the target's committed table and
    every registered target's."""
    from infra.targets import catalogs

    if path is None:
        return catalogs.plan_prices(port), catalogs.prices()
    from infra.perf.plan.prices import load_prices

    table = load_prices(path)
    return table, table


def fleet(
    traffic: list[Sample],
    peak: Decimal | None,
    options: list[Candidate],
    safety: Decimal,
    price_date: str,
) -> tuple[PlanReport, list[dict[str, object]]]:
    """Units, instances and dollars of every option over ``traffic`` (``Sample`` rows, in the
    unit's rate: requests/s, or output tokens/s for a token unit) or a constant ``peak``."""
    from infra.perf.plan.capacity import plan as make_plan

    try:
        report = make_plan(traffic, peak, options, safety, price_date)
        return report, [report.row(option) for option in report.options]
    except (DecimalException, OverflowError) as exc:
        raise UsageError(
            f"the plan's numbers are out of range ({exc.__class__.__name__})",
            hint="check --peak-rps, the --traffic rows and the measurement's throughput",
        ) from None


def ic_rows(
    url: str,
    hot: int | None,
    report: PlanReport,
    unit_rate: Decimal,
    specs: list[str],
    base: Candidate | None,
    table: PriceTable,
    streamed: bool = False,
) -> list[dict[str, object]]:
    """The compare port's rows for the release's models (issue 19: inference components vs
    MME vs the baseline); a decoupled model, or a streamed (token) load, gets MME refused with
    the reason. The target that compares is the registry's (``registry.compare_port``)."""
    from infra.targets import registry
    from infra.targets.deployment import load_manifest
    from infra.targets.ports import ComparedLoad

    load = ComparedLoad(report.peak.rps, hot, unit_rate, report.safety)
    models = list(load_manifest(url).models)
    return registry.compare_port().rows(models, load, specs, table, base, streamed)


def fleet_table(
    out: Output, title: str, rows: list[dict[str, object]], unit: str = "rps", per: str = "$/1M"
) -> None:
    """Units and instances at the peak/at the trough, their cost, and the cost per million
    (inferences, or output tokens for a token unit) at the traffic's average."""
    columns = ["option", f"unit {unit}", "units", "inst.", "$/h peak", "$/h avg", per]
    table = [
        (
            escape(str(r["name"])),
            f"{r['unit_rps']}{'' if r['unit_rps_measured'] else '*'}",
            f"{r['peak_units']}/{r['trough_units']}",
            f"{r['peak_instances']}/{r['trough_instances']}",
            r["peak_usd_per_hour"],
            r["average_usd_per_hour"],
            r["usd_per_million"],
        )
        for r in rows
    ]
    out.table(title, columns, table)
    assumed = any(not r["unit_rps_measured"] for r in rows)
    out.info("units, inst.: at the peak/at the trough" + (ASSUMED_NOTE if assumed else ""))


ASSUMED_NOTE = "; * assumed: not measured on this instance type (see the warning above)"
#: the components table's keys (``--json``) and the headers people read
IC_HEADERS = {
    "option": "option",
    "instances_peak": "inst. peak",
    "instances_idle": "inst. idle",
    "gpus_reserved": "GPUs reserved",
    "usd_per_hour_peak": "$/h peak",
    "usd_per_hour_idle": "$/h idle",
    "usd_per_million": "$/1M",
    "note": "note",
}


def ic_table(out: Output, components: list[dict[str, object]], per: str = "$/1M") -> None:
    keys = list(IC_HEADERS)
    headers = [per if k == "usd_per_million" else IC_HEADERS[k] for k in keys]
    cells = [["-" if r[k] is None else escape(str(r[k])) for k in keys] for r in components]
    out.table("inference components vs MME vs baseline (same load)", headers, cells, drop=(3,))


def warn_unmeasured(
    out: Output, unit: Measurement | TokenMeasurement, rows: list[dict[str, object]]
) -> None:
    """Say loudly which candidates are priced with a rate measured on another unit."""
    assumed = [str(r["name"]) for r in rows if not r["unit_rps_measured"]]
    if not assumed:
        return
    unit_name = unit.instance_type or unit.gpu
    where = f"{unit.target} {unit_name}" if unit_name else f"the {unit.target} target"
    every = " (every candidate)" if len(assumed) == len(rows) else ""
    out.warn(
        f"NOT MEASURED{every}: {', '.join(assumed)} priced with the rate {unit.source} "
        f"measured on {where}, not on that instance type: the units, instances and costs of "
        "these rows are guesses. Bench the candidate itself "
        "(tdk bench --target T --instance-type TYPE --json > m.json) before deciding."
    )


def read_traffic(path: Path | None) -> list[Sample]:
    """``--traffic``'s rows (requests/s), none when not given."""
    from infra.perf.plan.capacity import read_traffic as read

    return read(path) if path is not None else []
