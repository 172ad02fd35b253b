"""Options that name a target and say where a deployment is, shared by every command that
takes ``--target`` (invoke, bench, metrics, endpoint, validate, plan).

The ``--target`` choices come from the target registry (``infra.targets.registry``), so every
command offers the same ones and a registered target appears everywhere.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from infra.targets import registry

if TYPE_CHECKING:
    from infra.targets.deployment import Given
    from infra.targets.operations import Locator

#: one member per registered target, in registry order (``sagemaker-ic``'s member is its value)
TargetName = StrEnum("TargetName", [(name, name) for name in registry.names()])  # type: ignore[misc]

TargetOpt = Annotated[
    TargetName,
    typer.Option("--target", help="The deployment target (its registered name)."),
]
OptionalTargetOpt = Annotated[
    TargetName | None,
    typer.Option("--target", help="The deployment target (its registered name)."),
]
#: ``--target`` of the operation commands: the stack's target with ``--stack``, else local
StackTargetOpt = Annotated[
    TargetName | None,
    typer.Option(
        "--target",
        help="The deployment target, by its registered name (default: the --stack's, else local).",
        show_default=False,
    ),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="SageMaker endpoint name; for local, the name `tdk local up --endpoint` gave "
        "(default: local).",
    ),
]
StackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack",
        "-s",
        help="The committed stack: its target, endpoint, region and release (a flag given "
        "alongside wins; a --target or --endpoint it contradicts is an error).",
    ),
]
StackOutputsOpt = Annotated[
    Path | None,
    typer.Option(
        "--outputs",
        help="With --stack: `pulumi stack output --json` of the deployed stack (default: asks "
        "the pulumi CLI when it is installed).",
    ),
]
ProjectDirOpt = Annotated[
    Path, typer.Option("--project-dir", help="Directory holding Pulumi.yaml and the stack files.")
]
PrometheusUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--prometheus-url",
        help="Kubernetes targets: query this Prometheus API (your own, or a port-forward) "
        "instead of the managed one; no auth.",
    ),
]
WorkspaceOpt = Annotated[
    str | None,
    typer.Option(
        "--workspace-id", help="eks: the AMP workspace (`pulumi stack output ampWorkspaceId`)."
    ),
]
UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="Kubernetes targets: Triton's HTTP URL (load balancer or `kubectl port-forward`).",
    ),
]


def locate(
    target: TargetName | None,
    given: Given,
    outputs: Path | None = None,
) -> tuple[TargetName, Locator]:
    """The target and its own locator: ``--stack`` names the target, flags win, an option the
    target does not take is refused (``infra.targets.deployment.resolve``)."""
    from infra.targets.deployment import resolve

    where = resolve(target.value if target is not None else None, given, outputs)
    return TargetName(where.target_name()), where
