"""``tdk endpoint status|wait``: a SageMaker endpoint's state, instance counts, last failure."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.common import JsonOpt, RegionOpt
from cli.output import Output

app = typer.Typer(
    help="A SageMaker endpoint's state: status, instance counts, last failure.",
    no_args_is_help=True,
)

EndpointNameOpt = Annotated[str, typer.Option("--endpoint", help="SageMaker endpoint name.")]


def _describe(endpoint: str, region: str | None) -> Any:
    from infra.clients.aws_session import aws_client
    from infra.targets.sagemaker.endpoint import describe

    sagemaker = aws_client("sagemaker", region)
    autoscaling = aws_client("application-autoscaling", region)
    return lambda: describe(sagemaker, autoscaling, endpoint)


def _show(out: Output, state: Any) -> None:
    if out.json_mode:
        out.json(state.as_dict())
        return
    out.info(f"[bold]{state.name}[/bold]: {state.status} (config {state.config_name})")
    if state.failure_reason:
        out.info(f"last failure: {state.failure_reason}")
    out.table(
        "variants",
        ["variant", "instance type", "current", "desired", "min", "max"],
        [
            (v.name, v.instance_type, v.current_instances, v.desired_instances,
             v.min_instances, v.max_instances)
            for v in state.variants
        ],
    )  # fmt: skip


@app.command("status")
def status(endpoint: EndpointNameOpt, region: RegionOpt = None, json_mode: JsonOpt = False) -> None:
    """Status, instance counts (current/desired, autoscaling min/max) and the last failure."""
    _show(Output(json_mode=json_mode), _describe(endpoint, region)())


@app.command("wait")
def wait(
    endpoint: EndpointNameOpt,
    region: RegionOpt = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait before giving up.")
    ] = 3600,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between polls.")] = 15,
    json_mode: JsonOpt = False,
) -> None:
    """Wait until the endpoint is InService; fail on Failed, on a rollback, or at the timeout."""
    from infra.targets.sagemaker.endpoint import wait_until_in_service

    out = Output(json_mode=json_mode)
    state = wait_until_in_service(
        _describe(endpoint, region),
        timeout=timeout,
        interval=interval,
        on_change=lambda s: out.info(f"{s.name}: {s.status}"),
    )
    _show(out, state)
