"""``tdk doctor``: the facts a stack relies on, their sources and ages, and what aged or broke."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import JsonOpt
from cli.doctor_machine import machine_report
from cli.doctor_machine import show as show_machine
from cli.output import Output

StackOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--stack", "-s", help="Stack to check, repeatable (default: every Pulumi.*.yaml)."
    ),
]
ProjectDirOpt = Annotated[
    Path, typer.Option("--project-dir", help="Directory holding Pulumi.yaml and the stack files.")
]


def _stacks(project_dir: Path, given: list[str] | None) -> list[str]:
    if given:
        return given
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in project_dir.glob("Pulumi.*.yaml"))


OnlineOpt = Annotated[
    bool,
    typer.Option(
        "--online",
        help="Also ask each cloud who the credentials are and compare the kit's facts with "
        "the cloud's own API (network).",
    ),
]


def _feasibility(project_dir: Path, name: str) -> dict[str, object]:
    """Whether committed stack ``name`` can deploy, through the one feasibility path:
    ``ok``, or its first refusal with the fix."""
    from infra.targets import stacks
    from infra.targets.engine_driver import stack_driver_report
    from infra.targets.feasibility import feasible
    from tdk.errors import TdkError

    try:
        result = feasible(stacks.load_stack(project_dir, name))
    except TdkError as exc:  # the stack names no target tdk knows, or its file is unreadable
        return {"target": "", "ok": False, "refusal": exc.message, "fix": exc.hint or ""}
    refusal = result.first_refusal()
    return {
        "target": result.target,
        "ok": refusal is None,
        "refusal": refusal.message if refusal else None,
        "fix": refusal.fix if refusal else None,
        "engine_driver": stack_driver_report(project_dir, name),
    }


def doctor(
    stack: StackOpt = None,
    project_dir: ProjectDirOpt = Path("."),
    online: OnlineOpt = False,
    json: JsonOpt = False,
) -> None:
    """What a deploy needs, per cloud: tools, state backend and credentials on this machine,
    placeholders left in the stacks, each stack's feasibility, and every fact it relies on.

    Every cloud/Triton fact a stack relies on, its source and age, and what has aged or
    broken as of today (TDK_TODAY=YYYY-MM-DD replays another day); then each stack's
    feasibility (the path `tdk validate --stack` takes). Exit 1 on a broken fact or a refused
    stack.

    Also this machine: the tools each stack's deploy needs (pulumi, kubectl, aws, gcloud, helm)
    and their versions, the Pulumi state backend, each cloud's credentials (from environment
    variables and files; --online asks the cloud), and placeholder values left in the stacks.
    """
    import infra.facts
    from infra.config import missing_project_hint
    from infra.targets.doctor import diagnose

    printer = Output(json_mode=json)
    day = infra.facts.today()
    report = {
        name: diagnose(project_dir, name, day, online) for name in _stacks(project_dir, stack)
    }
    feasibility = {name: _feasibility(project_dir, name) for name in report}
    broken = any(f.status == "broken" for found in report.values() for f in found)
    broken = broken or not all(f["ok"] for f in feasibility.values())
    machine = machine_report(project_dir, list(report), online)
    if json:
        printer.json(
            {
                "today": day.isoformat(),
                "ok": not broken,
                "stacks": {s: [f.to_json() for f in found] for s, found in report.items()},
                **machine,
                "feasibility": feasibility,
            }
        )
    else:
        # what this machine and the stacks lack first, the facts they rely on after
        show_machine(printer, machine)
        verdicts = [(name, str(f["target"]), "ok" if f["ok"] else f"refused: {f['refusal']} "
                     f"(fix: {f['fix']})") for name, f in feasibility.items()]  # fmt: skip
        if verdicts:
            printer.table(f"feasibility as of {day}", ("stack", "target", "feasibility"), verdicts)
        else:
            printer.warn(f"no stack file (Pulumi.<stack>.yaml) in {project_dir}: no feasibility "
                         f"to check; {missing_project_hint(project_dir)}")  # fmt: skip
        drivers = [(name, line) for name, f in feasibility.items()
                   for line in f.get("engine_driver") or []]  # type: ignore[attr-defined]  # fmt: skip
        if drivers:
            printer.table("engine images on the node driver", ("stack", "verdict"), drivers)
        _show_facts(printer, report, str(day))
    if broken:
        raise typer.Exit(1)


FACT_COLUMNS = ("status", "fact", "value", "note", "source")


def _show_facts(printer: Output, report: dict[str, list[Any]], day: str) -> None:
    """The facts as tables: those every stack shares once (the fact tables, botocore,
    sagemaker-core, prices), then each stack's own; the same row four times hid the rest."""
    rows = {name: [(f.status, f.fact, f.value, f.note, f.source) for f in found]
            for name, found in report.items()}  # fmt: skip
    shared = [r for r in next(iter(rows.values()), []) if all(r in mine for mine in rows.values())]
    if len(rows) > 1 and shared:
        title = f"every stack ({', '.join(rows)}) as of {day}"
        printer.table(title, FACT_COLUMNS, shared, whole=(1,), drop=(4,))
    else:
        shared = []
    for name, mine in rows.items():
        own = [r for r in mine if r not in shared]
        if own:
            printer.table(f"{name} as of {day}", FACT_COLUMNS, own, whole=(1,), drop=(4,))
