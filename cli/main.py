"""``tdk``: wires the command groups and maps every TdkError to a message and an exit code."""

from __future__ import annotations

import os
from typing import Any

import typer
from typer.core import TyperGroup

from cli import bench, endpoint, invoke, local, metrics, package, plan, render, tune, validate
from packager import __version__
from tdk.errors import TdkError


class _TdkGroup(TyperGroup):
    """Root group: a TdkError anywhere below becomes a red message, its hint and its exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TdkError as exc:
            if os.environ.get("TDK_DEBUG") == "1":
                raise
            typer.secho(f"error: {exc.message}", fg="red", err=True)
            if exc.hint:
                typer.secho(f"  hint: {exc.hint}", err=True)
            ctx.exit(exc.exit_code)


app = typer.Typer(
    name="tdk",
    cls=_TdkGroup,
    help="Triton Deploy Kit: validate, package, deploy and invoke Triton models anywhere.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("validate")(validate.validate)
app.command("package")(package.package)
app.command("invoke")(invoke.invoke)
app.command("bench")(bench.bench)
app.command("metrics")(metrics.metrics)
app.command("tune")(tune.tune)
app.command("plan")(plan.plan)
app.add_typer(local.app, name="local")
app.add_typer(endpoint.app, name="endpoint")
app.add_typer(render.app, name="render")


@app.callback(invoke_without_command=True)
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        typer.echo(f"tdk {__version__}")
        raise typer.Exit(0)


def main() -> None:
    """Console entry point."""
    app()
