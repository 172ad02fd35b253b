"""``tdk endpoint status|wait``: a deployment's state, for every target that can tell it.

SageMaker: endpoint status, instance counts, last failure. Kubernetes targets: the pods' readiness
and Triton's through ``--url``. local: the endpoint's ``/ping``. What a target cannot do is
refused with its reason.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.common import JsonOpt
from cli.groups import grouped
from cli.locate import WhereOptions
from cli.output import Output

app = typer.Typer(
    help="A deployment's state: status, readiness, instance counts, last failure.",
    no_args_is_help=True,
)


def _show(out: Output, state: Any) -> None:
    if out.json_mode:
        out.json(state.as_dict())
        return
    out.info(f"[bold]{state.name}[/bold] ({state.target}): {state.state}")
    if state.failure:
        out.info(f"last failure: {state.failure}")
    for key, value in state.details.items():
        if not isinstance(value, list):  # a list is the rows, shown as the table below
            out.info(f"{key}: {value}")
    if state.rows:
        columns = list(state.rows[0])
        out.table(state.rows_title, columns, [[row[c] for c in columns] for row in state.rows])


@app.command("status")
@grouped
def status(where: WhereOptions, json_mode: JsonOpt = False) -> None:
    """The deployment's state now (SageMaker: instance counts, autoscaling bounds, failure;
    Kubernetes targets: Ready pods and why the others are not)."""
    _show(Output(json_mode=json_mode), where.open().where.client().status())


@app.command("wait")
@grouped
def wait(
    where: WhereOptions,
    timeout: Annotated[
        float,
        typer.Option("--timeout", metavar="SECONDS", help="Seconds to wait before giving up."),
    ] = 3600,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between polls.")] = 15,
    json_mode: JsonOpt = False,
) -> None:
    """Wait until the deployment serves; fail on Failed, on a rollback, or at the timeout."""
    out = Output(json_mode=json_mode)
    client = where.open().where.client()
    state = client.wait(timeout, interval, lambda s: out.info(f"{s.name}: {s.state}"))
    _show(out, state)
