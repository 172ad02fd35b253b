"""``tdk plan MEASUREMENT``: serving units, instances and cost for a traffic profile, against a
baseline; optionally write the stack's scaling keys."""

from __future__ import annotations

from decimal import Decimal, DecimalException
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from cli.common import JsonOpt
from cli.locate import OptionalTargetOpt
from cli.output import Output
from infra.planning.report import MAX_RATE
from tdk.errors import UsageError
from tdk.numbers import decimal_of

if TYPE_CHECKING:
    from cli.locate import TargetName
    from infra.perf.measurement import Measurement
    from infra.perf.stackfile import StackFile
    from infra.perf.token_cost import TokenMeasurement, TokenRow
    from infra.planning.pricing import PriceTable
    from infra.planning.report import Candidate, PlanReport
    from infra.targets.registry import StackSettings, TargetEntry

MeasurementArg = Annotated[
    Path, typer.Argument(help="`tdk bench --json` or `tdk tune --json` output of one unit.")
]


def _decimal(option: str, text: str | None) -> Decimal | None:
    if text is None:
        return None
    # ASCII digits, finite, in range: 1e300 or an Arabic-Indic digit are refused, not priced
    return decimal_of(text, option, 0, MAX_RATE, hint=f"e.g. {option} 100")


def plan(
    measurement: MeasurementArg,
    peak_rps: Annotated[
        str | None,
        typer.Option(
            "--peak-rps", metavar="FLOAT", help="Peak inferences/s (default: the traffic maximum)."
        ),
    ] = None,
    traffic: Annotated[
        Path | None, typer.Option("--traffic", help="CSV of time,rps (one row per interval).")
    ] = None,
    slo_ms: Annotated[
        str | None,
        typer.Option("--latency-budget-ms", metavar="FLOAT", help="p99 the unit must meet (ms)."),
    ] = None,
    target: OptionalTargetOpt = None,
    instance_types: Annotated[
        list[str] | None,
        typer.Option("--instance-type", help="Candidate TYPE or TYPE:RPS (repeatable)."),
    ] = None,
    region: Annotated[str | None, typer.Option("--region", help="Price region.")] = None,
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", min=1, help="GKE.")] = 1,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="TYPE:RPS:USD",
            help="What runs today: instance type, what it serves, $/h, e.g. "
            "inf2.xlarge:2756rps:0.76",
        ),
    ] = None,
    safety_factor: Annotated[
        str,
        typer.Option(
            "--safety-factor", metavar="FLOAT", help="Share of a unit's capacity to plan for."
        ),
    ] = "0.5",
    prices: Annotated[Path | None, typer.Option("--prices", help="Price table override.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="PNG: cost per hour.")] = None,
    write_stack: Annotated[
        Path | None, typer.Option("--write-stack", help="Pulumi.<stack>.yaml to update.")
    ] = None,
    components: Annotated[
        str | None,
        typer.Option(
            "--components",
            help="Release URL: also compare SageMaker inference "
            "components, MME and the baseline for its models.",
        ),
    ] = None,
    hot_models: Annotated[
        int | None,
        typer.Option(
            "--hot-models",
            min=1,
            help="With --components: models taking the peak, the rest idle (default: all).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Write scaling keys measured on another target or instance type."
        ),
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Cost per hour and per million inferences of each candidate; scaling keys for a stack."""
    from infra.perf import candidates as cands
    from infra.perf.measurement import load_measurement
    from infra.perf.plan import plan as make_plan
    from infra.perf.plan import read_traffic
    from infra.perf.prices import load_prices
    from infra.perf.token_cost import load_token_measurement

    out = Output(json_mode=json)
    tokens = load_token_measurement(measurement)
    if tokens is not None:  # a `bench --prompt` measurement: cost per million output tokens
        _refuse_unplanned_for_tokens(
            {"--peak-rps": peak_rps, "--traffic": traffic, "--latency-budget-ms": slo_ms,
             "--components": components, "--hot-models": hot_models, "--plot": plot,
             "--write-stack": write_stack}
        )  # fmt: skip
        safety = _decimal("--safety-factor", safety_factor) or Decimal(0)
        where = (region, prices, gpus_per_node)
        _token_plan(out, tokens, target, instance_types or [], where, (baseline, safety))
        return
    unit = load_measurement(measurement)
    capacity = unit.capacity(_decimal("--latency-budget-ms", slo_ms))
    unit_rps = capacity.throughput_rps * unit.batch  # requests/s x inferences per request
    stack, settings = _stack(write_stack)
    entry = _entry(target.value if target else None, unit.target, settings)
    if settings is not None:
        stack_unit = entry.plan_unit(settings)
        region = region or stack_unit.region
        gpus_per_node = stack_unit.gpus_per_node
        instance_types = [*(instance_types or cands.defaults(entry, None)), stack_unit.instance]
    region = region or entry.default_region
    table = load_prices(prices)
    measured_on = unit.instance_type or unit.gpu
    specs = list(dict.fromkeys(instance_types or cands.defaults(entry, measured_on)))
    options = [
        cands.candidate(entry, s, region, table, unit_rps, measured_on, gpus_per_node)
        for s in specs
    ]
    if baseline is not None:
        options.append(cands.baseline(baseline, region, table))
    try:
        report = make_plan(
            read_traffic(traffic) if traffic else [],
            _decimal("--peak-rps", peak_rps),
            options,
            _decimal("--safety-factor", safety_factor) or Decimal(0),
            table.date,
        )
        rows = [report.row(option) for option in report.options]
    except (DecimalException, OverflowError) as exc:
        raise UsageError(
            f"the plan's numbers are out of range ({exc.__class__.__name__})",
            hint="check --peak-rps, the --traffic rows and the measurement's throughput",
        ) from None
    if plot is not None:
        from infra.perf.plot import cost_plot

        cost_plot(report, plot)
    diff = None
    if stack is not None and settings is not None:  # last, after everything else succeeded
        instance = settings.entry.plan_unit(settings).instance
        _check_measured_on(unit, entry.name, instance, report, force)
        diff = _write_stack(stack, entry, report, instance)
    ic = None
    if components is not None:
        base = options[-1] if baseline is not None else None
        ic = _ic_rows(components, hot_models, report, unit_rps, specs, base, table)
    if not json:  # the JSON rows carry unit_rps_measured
        _warn_unmeasured(out, unit, rows)
    _show(out, report, rows, unit_rps, region, diff, plot, json, ic)


def _ic_rows(
    url: str,
    hot: int | None,
    report: PlanReport,
    unit_rps: Decimal,
    specs: list[str],
    base: Candidate | None,
    table: PriceTable,
) -> list[dict[str, object]]:
    """Inference components vs MME vs the baseline for the release's models (issue 19)."""
    from cli.invoke import load_manifest
    from infra.targets.sagemaker_ic.entry import ENTRY as components
    from infra.targets.sagemaker_ic.plan import Load, ModelSize, compare

    models = [ModelSize(m.name, m.size) for m in load_manifest(url).models]
    types = [s.partition(":")[0] for s in specs if components.owns(s)]
    types = types or list(components.default_candidates)
    load = Load(report.peak.rps, hot or len(models), unit_rps, report.safety)
    rows = compare(models, load, types, components.default_region, table, base)
    return [row.as_dict(report.peak.rps) for row in rows]


def _entry(target: str | None, measured: str, settings: StackSettings | None) -> TargetEntry:
    """The target to plan for: ``--target``, else the stack's, else the measurement's, else
    the first registered target that plans."""
    from infra.targets import registry

    if settings is not None:
        if target is not None and registry.get(target).name != settings.entry.name:
            raise UsageError(
                f"--target {target} but the stack deploys {settings.entry.name}",
                hint="drop --target, or pass the stack file of that target",
            )
        target = settings.entry.name
    able = registry.able(registry.PLAN)
    if target is None:
        target = measured if measured in able else able[0]
    entry = registry.get(target)
    if not entry.can(registry.PLAN):
        raise entry.refuse(registry.PLAN)
    return entry


def _refuse_unplanned_for_tokens(given: dict[str, object]) -> None:
    """Options a token measurement cannot be planned with yet: refused, never ignored."""
    named = [option for option, value in given.items() if value is not None]
    if named:
        raise UsageError(
            f"{', '.join(named)}: not planned for a token (bench --prompt) measurement yet; "
            "its cost per million output tokens does not depend on them",
            hint=f"drop {', '.join(named)}, or plan a request measurement (tdk bench --json)",
        )


def _token_plan(
    out: Output,
    tokens: TokenMeasurement,
    target: TargetName | None,
    instance_types: list[str],
    where: tuple[str | None, Path | None, int],
    base: tuple[str | None, Decimal],
) -> None:
    """Cost per million output tokens of the measured unit (and --instance-type candidates) at
    --safety-factor of its rate, beside the --baseline; each row says where its numbers come
    from, and a rate measured on another target than the one priced is assumed, not measured."""
    from infra.perf import candidates as cands
    from infra.perf import token_cost
    from infra.perf.prices import load_prices

    region, prices, gpus_per_node = where
    baseline, safety = base
    entry = _entry(target.value if target else None, tokens.target, None)
    region = region or entry.default_region
    table = load_prices(prices)
    measured_on = tokens.instance_type or tokens.gpu
    specs = instance_types or ([measured_on] if measured_on else [])
    if not specs:
        raise UsageError(
            f"{tokens.source} does not say what it ran on",
            hint="pass --instance-type TYPE (or bench with --instance-type / --gpu)",
        )
    rows: list[TokenRow] = []
    measured: list[bool] = []
    for spec in dict.fromkeys(specs):
        option = cands.candidate(
            entry, spec, region, table, tokens.output_tokens_per_s, measured_on, gpus_per_node
        )
        on = f"{tokens.target} {measured_on}" if measured_on else "an unrecorded unit"
        rate = f"{tokens.source} (bench --prompt on {on})"
        here = option.measured and tokens.target == entry.name  # a local run is not on eks
        origin = f"measured: {rate}" if here else f"assumed from {rate}"
        price = f"price: {table.origin} ({table.date}, {region})"
        rows.append(token_cost.row(option, f"{origin}; {price}", safety))
        measured.append(here)
    if baseline is not None:
        rows.append(token_cost.baseline(baseline, region, table, safety))
        measured.append(True)
    note = tokens.load_note()
    if out.json_mode:
        options = [r.as_dict() | {"measured": m} for r, m in zip(rows, measured, strict=True)]
        out.json({"model": tokens.model, "region": region, "options": options, "note": note})
        return
    if note is not None:
        out.warn(note)
    flags = zip(rows, measured, strict=True)
    _warn_unmeasured(out, tokens, [{"name": r.name, "unit_rps_measured": m} for r, m in flags])
    _token_table(out, tokens, region, rows)


def _token_table(out: Output, tokens: TokenMeasurement, region: str, rows: list[TokenRow]) -> None:
    utilisation = rows[0].utilisation if rows else Decimal(1)
    columns = ["option", "$/h", "output tok/s", "$ / M output tokens", "source"]
    cells = [
        (r.name, str(r.usd_per_hour), str(r.output_tokens_per_s), str(r.usd_per_million_tokens),
         escape(r.source))
        for r in rows
    ]  # fmt: skip
    title = f"cost per million output tokens at {utilisation} of the rate ({tokens.model}"
    out.table(f"{title}, {region})", columns, cells)


def _stack(path: Path | None) -> tuple[StackFile | None, StackSettings | None]:
    if path is None:
        return None, None
    from infra.perf.stackfile import load_stack
    from infra.targets import registry

    registry.stack_from_path(path)  # the name is checked before the file is read
    stack = load_stack(path)
    project_dir, name = registry.stack_from_path(stack.path.resolve())  # a symlink: its file
    return stack, registry.load_stack(project_dir, name)


def _check_measured_on(
    unit: Measurement, target: str, instance: str, report: PlanReport, force: bool
) -> None:
    """Refuse scaling keys from a measurement of another unit than the stack deploys."""
    option = next(o for o in report.options if o.name == instance)
    if option.candidate.measured or force:
        return
    measured = unit.instance_type or unit.gpu or "an unrecorded unit"
    raise UsageError(
        f"{unit.source} was measured on {unit.target} {measured}, but the stack deploys "
        f"{target} {instance}: its scaling keys would be guesses",
        hint="bench the stack's instance type (tdk bench --instance-type ...), or pass --force",
    )


def _write_stack(stack: StackFile, entry: TargetEntry, report: PlanReport, instance: str) -> str:
    from infra.config import ConfigReader, merged_stack_config
    from infra.targets import registry
    from infra.targets.feasibility import require_feasible

    option = next(o for o in report.options if o.name == instance)
    updates = entry.scaling_updates(report, option)
    project_dir, name = registry.stack_from_path(stack.path.resolve())
    merged = merged_stack_config(project_dir, name, updates)
    require_feasible(registry.settings(ConfigReader(merged.get), name))  # before any write
    for key, value in updates.items():
        stack.set(key, value)
    diff = stack.diff()
    stack.write()
    return diff


def _show(
    out: Output,
    report: PlanReport,
    rows: list[dict[str, object]],
    unit_rps: Decimal,
    region: str,
    diff: str | None,
    plot: Path | None,
    json: bool,
    components: list[dict[str, object]] | None = None,
) -> None:
    traffic = (
        f"peak {report.peak.rps} rps, trough {report.trough.rps} rps, "
        f"average {report.average_rps:.2f} rps"
        if report.trough in report.traffic
        else f"{report.peak.rps} rps all the time (no --traffic: the average is the peak)"
    )
    assumed = [str(r["name"]) for r in rows if not r["unit_rps_measured"]]
    if json:
        out.json(
            {
                "price_date": report.price_date,
                "region": region,
                "measured_unit_rps": str(unit_rps),
                "safety_factor": str(report.safety),
                "peak_rps": str(report.peak.rps),
                "trough_rps": str(report.trough.rps),
                "average_rps": str(report.average_rps),
                "options": rows,
                "stack_diff": diff,
                "plot": str(plot) if plot else None,
                "components_vs_mme": components,
            }
        )
        return
    out.info(f"unit: {unit_rps} rps within the SLO; planning at {report.safety} of it; {traffic}")
    columns = ["option", "unit rps", "units", "inst.", "$/h peak", "$/h avg", "$/1M"]
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
    title = f"tdk plan ({region}, on-demand prices of {report.price_date})"
    out.table(title, columns, table)
    out.info("units, inst.: at the peak/at the trough" + (_ASSUMED_NOTE if assumed else ""))
    if diff is not None:
        out.console.print(
            escape(diff) if diff else "stack file already up to date", highlight=False
        )
    if plot is not None:
        out.info(f"plot: {plot}")
    if components:
        keys = list(_IC_HEADERS)
        out.table("inference components vs MME vs baseline (same load)",
                  [_IC_HEADERS[k] for k in keys],
                  [["-" if r[k] is None else escape(str(r[k])) for k in keys]
                   for r in components], drop=(3,))  # fmt: skip


_ASSUMED_NOTE = "; * assumed: not measured on this instance type (see the warning above)"
#: the components table's keys (``--json``) and the headers people read
_IC_HEADERS = {
    "option": "option",
    "instances_peak": "inst. peak",
    "instances_idle": "inst. idle",
    "gpus_reserved": "GPUs reserved",
    "usd_per_hour_peak": "$/h peak",
    "usd_per_hour_idle": "$/h idle",
    "usd_per_million": "$/1M",
    "note": "note",
}


def _warn_unmeasured(
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
