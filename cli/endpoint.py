"""``tdk endpoint``: placeholder until status/wait land."""

from __future__ import annotations

import typer

app = typer.Typer(help="Inspect a deployed endpoint.", no_args_is_help=True)
