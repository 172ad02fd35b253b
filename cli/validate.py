"""``tdk validate PATH...``: check Triton repositories before anything is deployed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from cli.common import JsonOpt
from cli.output import Output

PathsArg = Annotated[
    list[Path],
    typer.Argument(help="Triton repositories or single model directories.", metavar="PATH"),
]


def validate(paths: PathsArg, json: JsonOpt = False) -> None:
    """Check layout, config semantics, ensembles, ONNX graphs and names, as Triton would.

    Exit 0 when valid (warnings allowed), 1 when any model is invalid, 2 for usage errors.
    """
    from packager.validate.runner import has_errors, validate_paths

    out = Output(json_mode=json)
    findings = validate_paths(paths)
    errors = sum(f.severity == "error" for f in findings)
    if json:
        out.json([f.to_dict() for f in findings])
    elif findings:
        cells = [(f.severity, f.model, _short(f.file), f.field, f.message, f.fix) for f in findings]
        rows = [[escape(cell) for cell in row] for row in cells]  # "[text]" is not markup
        out.table("tdk validate", ("severity", "model", "file", "field", "problem", "fix"), rows)
        out.info(f"{errors} error(s), {len(findings) - errors} warning(s)")
    else:
        out.info(f"valid: no findings in {', '.join(str(p) for p in paths)}")
    if has_errors(findings):
        raise typer.Exit(1)


def _short(file: str) -> str:
    """``file`` relative to the working directory when it lies below it."""
    relative = os.path.relpath(file)
    return file if relative.startswith("..") else relative
