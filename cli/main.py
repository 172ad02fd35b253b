"""``tdk``: wires the command groups and maps every TdkError to a message and an exit code."""

from __future__ import annotations

import os
from typing import Any

import typer
from typer import rich_utils
from typer.core import TyperGroup

from cli import (
    bench,
    completion,
    endpoint,
    invoke,
    local,
    metrics,
    package,
    plan,
    render,
    tune,
    validate,
)
from cli.help import use_user_words
from cli.output import Output
from packager import __version__
from tdk.errors import TdkError


class _TdkGroup(TyperGroup):
    """Root group: help in the user's words; a TdkError anywhere below becomes a message, its
    hint and its exit code."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        use_user_words(self)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if os.environ.get("NO_COLOR"):  # typer's own help and usage errors too
            rich_utils.COLOR_SYSTEM = None
        return super().main(*args, **kwargs)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        use_user_words(self)  # typer adds the completion options after __init__
        super().format_help(ctx, formatter)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TdkError as exc:
            if os.environ.get("TDK_DEBUG") == "1":
                raise
            Output().error(exc.message, exc.hint)
            ctx.exit(exc.exit_code)


app = typer.Typer(
    name="tdk",
    cls=_TdkGroup,
    help="Triton Deploy Kit: validate, package, deploy and invoke Triton models anywhere.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("validate")(validate.validate)
app.command("package")(package.package)
app.command("invoke")(invoke.invoke)
app.command("bench")(bench.bench)
app.command("metrics")(metrics.metrics)
app.command("tune")(tune.tune)
app.command("plan")(plan.plan)
app.command("completion")(completion.completion)
app.add_typer(local.app, name="local")
app.add_typer(endpoint.app, name="endpoint")
app.add_typer(render.app, name="render")


@app.callback(invoke_without_command=True)
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        Output().text(f"tdk {__version__}")
        raise typer.Exit(0)


def main() -> None:
    """Console entry point."""
    app(prog_name="tdk")
