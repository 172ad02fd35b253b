"""``tdk plan MEASUREMENT``: serving units, instances and cost for a traffic profile, against a
baseline; optionally write the stack's scaling keys."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from cli.common import JsonOpt
from cli.groups import grouped, option_group
from cli.locate import OptionalTargetOpt
from cli.output import Output
from cli.plan_common import (
    fleet,
    fleet_table,
    ic_rows,
    ic_table,
    price_tables,
    read_traffic,
    warn_unmeasured,
)
from cli.plan_mme import BudgetOpt, HitRatioOpt, MaxPodsOpt, MmeTraceOpt, mme_plan
from cli.plan_tokens import token_plan
from infra.perf.plan.request import PlanRequest
from infra.targets.planning import check_candidates, checked_scaling_updates, plan_target
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.perf.plan.measurement import Measurement
    from infra.perf.plan.stackfile import StackFile
    from infra.planning.report import PlanReport
    from infra.targets.entry import TargetEntry
    from infra.targets.stacks import StackSettings

MeasurementArg = Annotated[
    Path, typer.Argument(help="`tdk bench --json` or `tdk tune --json` output of one unit.")
]


def _number(flag: str, help: str) -> Any:
    """A number option read as text (``PlanRequest`` parses it exactly, naming the flag)."""
    return typer.Option(flag, metavar="FLOAT", help=help)


PeakRpsOpt = Annotated[
    str | None,
    _number(
        "--peak-rps",
        "Peak inferences/s (default: the traffic maximum); on a bench generate measurement, "
        "requests/s at its sequence lengths.",
    ),
]
TrafficOpt = Annotated[
    Path | None, typer.Option("--traffic", help="CSV of time,rps (one row per interval).")
]
SloMsOpt = Annotated[
    str | None,
    _number(
        "--latency-budget-ms",
        "p99 the unit must meet (ms); on a bench generate measurement, of time to first token.",
    ),
]
InstanceTypesOpt = Annotated[
    list[str] | None,
    typer.Option("--instance-type", help="Candidate TYPE or TYPE:RPS (repeatable)."),
]
RegionOpt = Annotated[str | None, typer.Option("--region", help="Price region.")]
GpusPerNodeOpt = Annotated[int, typer.Option("--gpus-per-node", min=1, help="GKE.")]
BaselineOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="TYPE:RPS:USD",
        help="What runs today: instance type, what it serves, $/h, e.g. inf2.xlarge:2756rps:0.76",
    ),
]
SafetyFactorOpt = Annotated[
    str, _number("--safety-factor", "Share of a unit's capacity to plan for.")
]
PricesOpt = Annotated[Path | None, typer.Option("--prices", help="Price table override.")]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="PNG: cost per hour.")]
WriteStackOpt = Annotated[
    Path | None, typer.Option("--write-stack", help="Pulumi.<stack>.yaml to update.")
]
ComponentsOpt = Annotated[
    str | None,
    typer.Option(
        "--components",
        help="Release URL: also compare SageMaker inference components, MME and the baseline "
        "for its models.",
    ),
]
HotModelsOpt = Annotated[
    int | None,
    typer.Option(
        "--hot-models",
        min=1,
        help="With --components: models taking the peak, the rest idle (default: all).",
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option("--force", help="Write scaling keys measured on another target or instance type."),
]


@option_group
@dataclass(frozen=True)
class PlanOptions:
    """``tdk plan``'s options (MEASUREMENT aside), in the order its help lists them."""

    peak_rps: PeakRpsOpt = None
    traffic: TrafficOpt = None
    slo_ms: SloMsOpt = None
    target: OptionalTargetOpt = None
    instance_types: InstanceTypesOpt = None
    region: RegionOpt = None
    gpus_per_node: GpusPerNodeOpt = 1
    baseline: BaselineOpt = None
    safety_factor: SafetyFactorOpt = "0.5"
    prices: PricesOpt = None
    plot: PlotOpt = None
    write_stack: WriteStackOpt = None
    components: ComponentsOpt = None
    hot_models: HotModelsOpt = None
    force: ForceOpt = False
    json: JsonOpt = False
    mme_trace: MmeTraceOpt = None
    hit_ratio: HitRatioOpt = 0.9
    budgets: BudgetOpt = None
    max_pods: MaxPodsOpt = 8

    def request(self, measurement: Path) -> PlanRequest:
        """The library's request, each field from its option."""
        return PlanRequest(
            measurement=measurement,
            peak_rps=self.peak_rps,
            traffic=self.traffic,
            slo_ms=self.slo_ms,
            target=self.target.value if self.target else None,
            instance_types=self.instance_types,
            region=self.region,
            gpus_per_node=self.gpus_per_node,
            baseline=self.baseline,
            safety_factor=self.safety_factor,
            prices=self.prices,
            plot=self.plot,
            write_stack=self.write_stack,
            components=self.components,
            hot_models=self.hot_models,
            force=self.force,
            json=self.json,
            mme_trace=self.mme_trace,
            hit_ratio=self.hit_ratio,
            budgets=self.budgets,
            max_pods=self.max_pods,
        )


@grouped
def plan(measurement: MeasurementArg, options: PlanOptions) -> None:
    """Cost per hour and per million inferences of each candidate; scaling keys for a stack."""
    request = options.request(measurement)
    from infra.perf.plan.token_bench import load_token_bench

    out = Output(json_mode=request.json)
    if request.mme_trace is not None:
        mme_plan(out, request)
        return
    bench = load_token_bench(measurement)
    if bench is not None:  # a `bench generate` measurement: the same plan, in output tokens
        _refuse_unplanned_for_tokens({"--plot": request.plot, "--write-stack": request.write_stack})
        request.safety, request.peak, request.budget_ms  # noqa: B018 (each checked, in turn)
        token_plan(out, bench, request)
    else:
        _plan_requests(out, request)


@dataclass(frozen=True)
class _Units:
    """What the request plan prices: the candidates (each checked feasible), in ``region``."""

    region: str
    specs: list[str]
    gpus_per_node: int


def _units(r: PlanRequest, entry: TargetEntry, measured_on: str | None, settings: Any) -> _Units:
    """The candidates: --instance-type, else the target's defaults; with --write-stack
    (``settings``) also the stack's own unit, in its region, with its GPUs per node."""
    from infra.perf.plan import candidates as cands
    from infra.targets.registry import plan_port

    port = plan_port(entry)
    region, gpus_per_node, instance_types = r.region, r.gpus_per_node, r.instance_types
    if settings is not None:
        stack_unit = port.plan_unit(settings)
        region = region or stack_unit.region
        gpus_per_node = stack_unit.gpus_per_node
        instance_types = [*(instance_types or cands.defaults(port, None)), stack_unit.instance]
    region = region or port.default_region
    specs = list(dict.fromkeys(instance_types or cands.defaults(port, measured_on)))
    return _Units(region, specs, gpus_per_node)


def _plan_requests(out: Output, r: PlanRequest) -> None:
    from infra.perf.plan import candidates as cands
    from infra.perf.plan.measurement import load_measurement
    from infra.targets.registry import plan_port

    unit = load_measurement(r.measurement)
    capacity = unit.capacity(r.budget_ms)
    unit_rps = capacity.throughput_rps * unit.batch  # requests/s x inferences per request
    stack, settings = _stack(r.write_stack)
    entry = plan_target(r.target, unit.target, settings)
    port = plan_port(entry)
    measured_on = unit.instance_type or unit.gpu
    units = _units(r, entry, measured_on, settings)
    table, every = price_tables(r.prices, port)
    models = settings.models if settings is not None else []
    check_candidates(
        entry, units.specs, units.region, units.gpus_per_node, _committed(stack), models
    )
    options = [
        cands.candidate(port, s, units.region, table, unit_rps, measured_on, units.gpus_per_node)
        for s in units.specs
    ]
    if r.baseline is not None:
        options.append(cands.baseline(r.baseline, units.region, every))
    report, rows = fleet(read_traffic(r.traffic), r.peak, options, r.safety, table.date)
    if r.plot is not None:
        from infra.perf.plan.plot import cost_plot

        cost_plot(report, r.plot)
    diff = None
    if stack is not None and settings is not None:  # last, after everything else succeeded
        instance = port.plan_unit(settings).instance  # the stack's entry is ``entry``
        _check_measured_on(unit, entry.name, instance, report, r.force)
        diff = _write_stack(stack, entry, report, instance)
    ic = None
    if r.components is not None:
        base = options[-1] if r.baseline is not None else None
        ic = ic_rows(r.components, r.hot_models, report, unit_rps, units.specs, base, every)
    if not r.json:  # the JSON rows carry unit_rps_measured
        warn_unmeasured(out, unit, rows)
    _show(out, r, (report, rows, ic), unit_rps, units.region, diff)


def _refuse_unplanned_for_tokens(given: dict[str, object]) -> None:
    """Options a token measurement cannot be planned with yet: refused, never ignored."""
    named = [option for option, value in given.items() if value is not None]
    if named:
        raise UsageError(
            f"{', '.join(named)}: not planned for a token (bench generate) measurement yet "
            "(the stack's scaling keys and the plot are in requests)",
            hint=f"drop {', '.join(named)}, or plan a request measurement (tdk bench --json)",
        )


def _stack(path: Path | None) -> tuple[StackFile | None, StackSettings | None]:
    if path is None:
        return None, None
    from infra.perf.plan.stackfile import load_stack
    from infra.targets import stacks

    stacks.stack_from_path(path)  # the name is checked before the file is read
    stack = load_stack(path)
    project_dir, name = stacks.stack_from_path(stack.path.resolve())  # a symlink: its file
    return stack, stacks.load_stack(project_dir, name)


def _committed(stack: StackFile | None) -> tuple[Path, str] | None:
    """(project dir, stack name) of the planned stack file, if one is given."""
    from infra.targets import stacks

    return stacks.stack_from_path(stack.path.resolve()) if stack is not None else None


def _check_measured_on(
    unit: Measurement, target: str, instance: str, report: PlanReport, force: bool
) -> None:
    """Refuse scaling keys from a measurement of another unit than the stack deploys."""
    option = next(o for o in report.options if o.name == instance)
    if option.candidate.measured or force:
        return
    recorded = unit.instance_type or unit.gpu
    measured = f"{unit.target} {recorded}" if recorded else f"{unit.target} (no unit recorded)"
    raise UsageError(
        f"{unit.source} was measured on {measured}, but the stack deploys "
        f"{target} {instance}: its scaling keys would be guesses",
        hint="bench the stack's instance type (tdk bench --instance-type ...), or pass --force",
    )


def _write_stack(stack: StackFile, entry: TargetEntry, report: PlanReport, instance: str) -> str:
    """Write the plan's scaling keys into ``stack`` (checked deployable first); its diff."""
    from infra.targets import stacks

    committed = stacks.stack_from_path(stack.path.resolve())
    for key, value in checked_scaling_updates(entry, report, instance, committed).items():
        stack.set(key, value)
    diff = stack.diff()
    stack.write()
    return diff


def _show(
    out: Output,
    r: PlanRequest,
    found: tuple[PlanReport, list[dict[str, object]], list[dict[str, object]] | None],
    unit_rps: Decimal,
    region: str,
    diff: str | None,
) -> None:
    """The plan as JSON or tables: the fleet (``found``: the report, its rows, inference
    components vs MME), the stack's diff, the plot."""
    report, rows, components = found
    plot = r.plot
    traffic = (
        f"peak {report.peak.rps} rps, trough {report.trough.rps} rps, "
        f"average {report.average_rps:.2f} rps"
        if report.trough in report.traffic
        else f"peak {report.peak.rps} rps, costed as if it lasted all the time (no --traffic: the "
        "average is the peak); the trough column is idle, no request: the units the fleet keeps"
    )
    if r.json:
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
    title = f"tdk plan ({region}, on-demand prices of {report.price_date})"
    fleet_table(out, title, rows)
    if diff is not None:
        out.console.print(
            escape(diff) if diff else "stack file already up to date", highlight=False
        )
    if plot is not None:
        out.info(f"plot: {plot}")
    if components:
        ic_table(out, components)
