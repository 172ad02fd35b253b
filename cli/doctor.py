"""``tdk doctor``: the facts a stack relies on, their sources and ages, and what aged or broke."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.common import JsonOpt
from cli.doctor_machine import machine_report
from cli.doctor_machine import show as show_machine
from cli.output import Output

StackOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--stack", "-s", help="Stack to check (repeatable); default: every Pulumi.*.yaml."
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
    bool, typer.Option("--online", help="Also ask each cloud who the credentials are (network).")
]


def doctor(
    stack: StackOpt = None,
    project_dir: ProjectDirOpt = Path("."),
    online: OnlineOpt = False,
    json: JsonOpt = False,
) -> None:
    """Every cloud/Triton fact a stack relies on, its source and age, and what has aged or
    broken as of today (TDK_TODAY=YYYY-MM-DD replays another day). Exit 1 on a broken one.

    Also this machine: the tools each stack's deploy needs (pulumi, kubectl, aws, gcloud, helm)
    and their versions, the Pulumi state backend, each cloud's credentials (from environment
    variables and files; --online asks the cloud), and placeholder values left in the stacks.
    """
    import infra.facts
    from infra.facts.doctor import diagnose

    printer = Output(json_mode=json)
    day = infra.facts.today()
    report = {name: diagnose(project_dir, name, day) for name in _stacks(project_dir, stack)}
    broken = any(f.status == "broken" for found in report.values() for f in found)
    machine = machine_report(project_dir, list(report), online)
    if json:
        printer.json(
            {
                "today": day.isoformat(),
                "ok": not broken,
                "stacks": {s: [f.to_json() for f in found] for s, found in report.items()},
                **machine,
            }
        )
    else:
        for name, found in report.items():
            rows = [(f.status, f.fact, f.value, f.note, f.source) for f in found]
            printer.table(
                f"{name} as of {day}", ("status", "fact", "value", "note", "source"), rows,
                whole=(1,), drop=(4,),
            )  # fmt: skip
        show_machine(printer, machine)
    if broken:
        raise typer.Exit(1)
