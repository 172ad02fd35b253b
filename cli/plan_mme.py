"""``tdk plan MEASUREMENT --mme-trace TRACE``: the pods and per-pod budget that serve a trace of
TargetModels at a hit ratio for the least money, with what a cold request costs, beside a
baseline fleet (e.g. the SageMaker MME instances that serve the same trace today)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.output import Output
from cli.plan_common import price_tables
from infra.perf.plan.request import PlanRequest
from infra.targets.planning import plan_target
from tdk.errors import UsageError

MmeTraceOpt = Annotated[
    Path | None,
    typer.Option(
        "--mme-trace",
        help="Trace of TargetModels (one a line, or CSV time,target_model): plan pods x budget "
        "for Kubernetes mme mode; MEASUREMENT is then `bench/mme_k8s.py --json` output.",
    ),
]
HitRatioOpt = Annotated[
    float, typer.Option("--hit-ratio", min=0.0, max=1.0, help="With --mme-trace: the goal.")
]
BudgetOpt = Annotated[
    list[int] | None,
    typer.Option("--budget", min=1, help="With --mme-trace: models per pod (repeatable)."),
]
MaxPodsOpt = Annotated[
    int, typer.Option("--max-pods", min=1, max=512, help="With --mme-trace: pods to try.")
]
MME_DEFAULT_BUDGETS = (10, 20, 40)


def mme_plan(out: Output, r: PlanRequest) -> None:
    """Replay the trace on every (pods, budget), price each, print the cheapest that reaches
    ``--hit-ratio`` and the table; ``--baseline TYPE[:USD_PER_HOUR]`` is replayed alike."""
    from infra.perf.plan import candidates as cands
    from infra.perf.plan import mme_trace as sim
    from infra.targets.registry import plan_port

    assert r.mme_trace is not None
    if r.target is None:
        from infra.targets import registry
        from infra.targets.capabilities import PLAN

        raise UsageError("--mme-trace plans pods of a Kubernetes target: which one?",
                         hint=f"pass --target {' or '.join(registry.able(PLAN))}")  # fmt: skip
    measured = sim.load_measured(r.measurement)
    trace = sim.read_trace(r.mme_trace)
    entry = plan_target(r.target, "", None)
    port = plan_port(entry)
    region = r.region or port.default_region
    table, every = price_tables(r.prices, port)
    spec = (r.instance_types or cands.defaults(port, None))[0]
    unit = cands.candidate(port, spec, region, table, Decimal(1), None, r.gpus_per_node)
    per_pod = float(unit.usd_per_hour) / unit.units_per_instance
    budgets = r.budgets or list(MME_DEFAULT_BUDGETS)
    options = sim.fleet(trace, measured.costs, per_pod, r.max_pods, budgets, measured.concurrency,
                        measured.headroom)  # fmt: skip
    best = sim.cheapest(options, r.hit_ratio)
    base = _baseline(r, trace, measured, budgets, region, every)
    rows = [_row(f"{o.flight.pods} x {spec}", o) for o in options]
    payload: dict[str, Any] = {
        "trace": str(r.mme_trace), "requests": len(trace), "models": len(set(trace)),
        "hit_ratio_goal": r.hit_ratio, "price_date": table.date, "region": region,
        "cold_ms": measured.costs.cold_ms, "warm_ms": measured.costs.warm_ms,
        "choice": _row(f"{best.flight.pods} x {spec}", best) if best else None,
        "baseline": _row(f"{base.flight.pods} x {r.baseline}", base) if base else None,
        "options": rows,
    }  # fmt: skip
    if r.json:
        out.json(payload)
        return
    _show(out, payload, spec)


def _row(name: str, o: Any) -> dict[str, object]:
    f = o.flight
    return {
        "option": name, "pods": f.pods, "budget": f.budget, "hit_ratio": round(f.hit_ratio, 4),
        "cold_per_1000": round(1000 * f.cold_ratio, 1), "evictions": f.evictions,
        "max_loaded": f.max_loaded, "p99_ms": round(o.p99_ms_estimate, 1),
        "usd_per_hour": round(o.usd_per_hour, 4),
    }  # fmt: skip


def _baseline(
    r: PlanRequest, trace: list[str], measured: Any, budgets: list[int], region: str, every: Any
) -> Any:
    """``--baseline TYPE[:USD_PER_HOUR]``: the same trace on instances of TYPE (its price from
    every target's table unless given), the cheapest count that reaches the goal."""
    from infra.perf.plan import mme_trace as sim

    if r.baseline is None:
        return None
    name, _, price = r.baseline.partition(":")
    hint = 'with --mme-trace: --baseline TYPE or TYPE:USD_PER_HOUR, e.g. "ml.g5.xlarge"'
    try:
        usd = float(price) if price else float(every.find(region, name).usd_per_hour)
    except ValueError:
        raise UsageError(f"--baseline {r.baseline!r}: {price!r} is not $/h", hint=hint) from None
    if not name or not 0 < usd < 10_000:
        raise UsageError(f"--baseline {r.baseline!r}: expected TYPE[:USD_PER_HOUR]", hint=hint)
    options = sim.fleet(trace, measured.costs, usd, r.max_pods, budgets, measured.concurrency)
    return sim.cheapest(options, r.hit_ratio)


def _show(out: Output, payload: dict[str, Any], spec: str) -> None:
    best, base = payload["choice"], payload["baseline"]
    out.info(
        f"trace: {payload['requests']:,} requests over {payload['models']:,} models; a cold "
        f"request {payload['cold_ms']:.0f} ms, a warm one {payload['warm_ms']:.1f} ms (measured)"
    )
    columns = ["option", "budget", "hit ratio", "cold/1000", "p99 ms", "$/h"]
    keys = ["option", "budget", "hit_ratio", "cold_per_1000", "p99_ms", "usd_per_hour"]
    limit = best["pods"] + 1 if best else payload["options"][-1]["pods"]
    shown = [r for r in payload["options"] if r["pods"] <= limit]
    title = f"tdk plan --mme-trace ({payload['region']}, prices of {payload['price_date']})"
    out.table(title, columns, [tuple(str(r[k]) for k in keys) for r in shown])
    goal = payload["hit_ratio_goal"]
    if best is None:
        out.warn(f"no fleet of up to {payload['options'][-1]['pods']} {spec} reaches a hit "
                 f"ratio of {goal}: raise --max-pods or --budget")  # fmt: skip
    else:
        out.info(f"choice: {best['option']}, budget {best['budget']} models per pod: hit ratio "
                 f"{best['hit_ratio']} (goal {goal}) at ${best['usd_per_hour']}/h")  # fmt: skip
    if base is not None:
        out.info(f"baseline: {base['option']}, hit ratio {base['hit_ratio']} at "
                 f"${base['usd_per_hour']}/h")  # fmt: skip
