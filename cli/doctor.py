"""``tdk doctor``: the facts a stack relies on, their sources and ages, and what aged or broke."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.common import JsonOpt
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


def doctor(
    stack: StackOpt = None,
    project_dir: ProjectDirOpt = Path("."),
    json: JsonOpt = False,
) -> None:
    """Every cloud/Triton fact a stack relies on, its source and age, and what has aged or
    broken as of today (TDK_TODAY=YYYY-MM-DD replays another day). Exit 1 on a broken one."""
    import infra.facts
    from infra.facts.doctor import diagnose

    printer = Output(json_mode=json)
    day = infra.facts.today()
    report = {name: diagnose(project_dir, name, day) for name in _stacks(project_dir, stack)}
    broken = any(f.status == "broken" for found in report.values() for f in found)
    if json:
        printer.json(
            {
                "today": day.isoformat(),
                "ok": not broken,
                "stacks": {s: [f.to_json() for f in found] for s, found in report.items()},
            }
        )
    else:
        for name, found in report.items():
            rows = [(f.status, f.fact, f.value, f.note, f.source) for f in found]
            printer.table(
                f"{name} as of {day}", ("status", "fact", "value", "note", "source"), rows,
                whole=(1,), drop=(4,),
            )  # fmt: skip
    if broken:
        raise typer.Exit(1)
