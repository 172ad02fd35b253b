"""``tdk plan`` on a ``tdk bench generate`` measurement: cost per million output tokens at
``--safety-factor`` of the unit's rate and, given ``--peak-rps`` / ``--traffic`` (requests/s at
the measured sequence lengths), the fleet at the peak and trough and inference components vs
MME, through the request plan's own code with the unit in output tokens/s."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from rich.markup import escape

from cli import plan_common as common
from cli.output import Output
from infra.targets.planning import check_candidates, plan_target
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.perf.plan.request import PlanRequest
    from infra.perf.plan.token_bench import TokenBench, TokenMeasurement
    from infra.perf.plan.token_cost import TokenRow
    from infra.planning.pricing import PriceTable
    from infra.planning.report import Candidate, PlanReport


@dataclass(frozen=True)
class _Fleet:
    report: PlanReport
    rows: list[dict[str, object]]
    per_request: Decimal
    components: list[dict[str, object]] | None


def token_plan(out: Output, bench: TokenBench, args: PlanRequest) -> None:
    """Price the level ``--latency-budget-ms`` picks on each candidate (and --baseline); each
    row says where its numbers come from, and a rate measured on another target than the one
    priced is assumed, not measured."""
    from infra.perf.plan import candidates as cands
    from infra.perf.plan import token_cost
    from infra.targets.registry import plan_port

    tokens = bench.capacity(args.budget_ms)
    entry = plan_target(args.target, tokens.target, None, streams=True)
    port = plan_port(entry)
    region = args.region or port.default_region
    table, every = common.price_tables(args.prices, port)
    base = token_cost.baseline_candidate(args.baseline, region, every) if args.baseline else None
    measured_on = tokens.instance_type or tokens.gpu
    specs = list(dict.fromkeys(args.instance_types or ([measured_on] if measured_on else [])))
    if not specs:
        raise UsageError(
            f"{tokens.source} does not say what it ran on",
            hint="pass --instance-type TYPE (or bench with --instance-type / --gpu)",
        )
    rate = tokens.output_tokens_per_s
    # with --components, the types the plan's target does not own (ml.*) are the components'
    priced = [s for s in specs if args.components is None or port.owns(s.partition(":")[0])]
    check_candidates(entry, priced or specs, region, args.gpus_per_node)
    options = [
        cands.candidate(port, s, region, table, rate, measured_on, args.gpus_per_node)
        for s in priced or specs
    ]
    on = f"{tokens.target} {measured_on}" if measured_on else f"{tokens.target} (no unit recorded)"
    measured = [o.measured and tokens.target == entry.name for o in options]  # local != eks
    price = f"price: {table.origin} ({table.date}, {region})"
    rows: list[TokenRow] = []
    for option, here in zip(options, measured, strict=True):
        origin = f"{tokens.source} (bench generate on {on}, {tokens.level})"
        origin = f"measured: {origin}" if here else f"assumed from {origin}"
        rows.append(token_cost.row(option, f"{origin}; {price}", args.safety, tokens.input_ratio))
    chosen = [_measured_as(o, m) for o, m in zip(options, measured, strict=True)]
    if base is not None:
        rows.append(token_cost.row(base[0], base[1], args.safety))
        measured.append(True)
        chosen.append(base[0])
    found = _fleet(tokens, args, chosen, specs, (table, every))
    _show(out, tokens, region, rows, measured, found, args)


def _measured_as(option: Candidate, measured: bool) -> Candidate:
    """``option`` marked measured only where the bench ran on the priced target too."""
    from dataclasses import replace

    return replace(option, measured=measured)


def _fleet(
    tokens: TokenMeasurement,
    args: PlanRequest,
    options: list[Candidate],
    specs: list[str],
    tables: tuple[PriceTable, PriceTable],
) -> _Fleet | None:
    """The request plan's fleet over ``--traffic`` / ``--peak-rps`` in output tokens/s (each
    request is the measured output tokens), and ``--components`` at that load; None when no
    traffic is given (the cost per million tokens does not need one)."""
    from infra.perf.plan import token_cost

    if args.peak is None and args.traffic is None:
        if args.components is not None:
            raise UsageError("no traffic given", hint="pass --peak-rps N and/or --traffic FILE")
        return None
    per_request = tokens.tokens_per_request
    if per_request is None:
        raise UsageError(
            f"{tokens.source} does not record its output tokens per request (ok, "
            "output_tokens), so requests/s cannot be turned into tokens/s",
            hint="bench again with this tdk (tdk bench generate --prompt ... --json)",
        )
    traffic = token_cost.in_tokens(common.read_traffic(args.traffic), per_request)
    peak = None if args.peak is None else args.peak * per_request
    report, rows = common.fleet(traffic, peak, options, args.safety, tables[0].date)
    ic = None
    if args.components is not None:
        base = options[-1] if args.baseline is not None else None
        ic = common.ic_rows(args.components, args.hot_models, report, tokens.rate, specs,
                            base, tables[1], streamed=True)  # fmt: skip
    return _Fleet(report, rows, per_request, ic)


def _show(
    out: Output,
    tokens: TokenMeasurement,
    region: str,
    rows: list[TokenRow],
    measured: list[bool],
    found: _Fleet | None,
    args: PlanRequest,
) -> None:
    note = tokens.load_note()
    if out.json_mode:
        options = [r.as_dict() | {"measured": m} for r, m in zip(rows, measured, strict=True)]
        if found is not None:
            for option, fleet in zip(options, found.rows, strict=True):
                option["fleet"] = _fleet_dict(fleet)
        out.json({"model": tokens.model, "region": region, "level": tokens.level,
                  "latency_budget_ms": _text(args.budget_ms),
                  "ttft_p99_ms": _text(tokens.ttft_p99_ms), "options": options, "note": note,
                  "traffic": _traffic(found),
                  "components_vs_mme": found.components if found else None})  # fmt: skip
        return
    if note is not None:
        out.warn(note)
    flags = zip(rows, measured, strict=True)
    common.warn_unmeasured(
        out, tokens, [{"name": r.name, "unit_rps_measured": m} for r, m in flags]
    )
    if args.budget_ms is not None:
        out.info(f"{tokens.level}: p99 time to first token {tokens.ttft_p99_ms} ms within "
                 f"--latency-budget-ms {args.budget_ms}")  # fmt: skip
    _token_table(out, tokens, region, rows)
    if found is None:
        return
    report = found.report
    out.info(f"fleet at {report.safety} of each unit's rate; {_traffic_line(found)}")
    title = f"tdk plan ({region}, on-demand prices of {report.price_date}), in output tokens"
    common.fleet_table(out, title, found.rows, unit="tok/s", per="$/M out tok")
    if found.components:
        common.ic_table(out, found.components, per="$/M out tok")


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _fleet_dict(row: dict[str, object]) -> dict[str, object]:
    keys = ("peak_units", "trough_units", "peak_instances", "trough_instances",
            "peak_usd_per_hour", "average_usd_per_hour")  # fmt: skip
    return {k: row[k] for k in keys} | {"usd_per_million_output_tokens": row["usd_per_million"]}


def _traffic(found: _Fleet | None) -> dict[str, str] | None:
    """The traffic in requests/s (as given) and in output tokens/s (as planned)."""
    if found is None:
        return None
    report, per = found.report, found.per_request
    return {
        "output_tokens_per_request": _short(per),
        "peak_rps": _short(report.peak.rps / per),
        "trough_rps": _short(report.trough.rps / per),
        "average_rps": _short(report.average_rps / per),
        "peak_output_tokens_per_s": _short(report.peak.rps),
        "average_output_tokens_per_s": _short(report.average_rps),
    }


def _short(value: Decimal) -> str:
    """A figure to a thousandth, without trailing zeros (the division back to requests/s)."""
    return f"{value.quantize(Decimal('0.001')).normalize():f}"


def _traffic_line(found: _Fleet) -> str:
    shown = _traffic(found) or {}
    return (
        f"peak {shown['peak_rps']} requests/s x {shown['output_tokens_per_request']} output "
        f"tokens per request (measured) = {shown['peak_output_tokens_per_s']} output tok/s"
    )


def _token_table(out: Output, tokens: TokenMeasurement, region: str, rows: list[TokenRow]) -> None:
    utilisation = rows[0].utilisation if rows else Decimal(1)
    columns = ["option", "$/h", "output tok/s", "$ / M output tokens", "$ / M in+out", "source"]
    cells = [
        (r.name, str(r.usd_per_hour), str(r.output_tokens_per_s), str(r.usd_per_million_tokens),
         "-" if r.usd_per_million_total_tokens is None else str(r.usd_per_million_total_tokens),
         escape(r.source))
        for r in rows
    ]  # fmt: skip
    title = f"cost per million output tokens at {utilisation} of the rate ({tokens.model}"
    out.table(f"{title}, {region})", columns, cells)
