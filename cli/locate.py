"""Options that name a target and say where a deployment is, shared by every command that
takes ``--target`` (invoke, bench, metrics, endpoint, validate, plan).

The ``--target`` choices come from the target registry (``infra.targets.registry``), so every
command offers the same ones and a registered target appears everywhere.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from infra.targets import registry

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
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint", help="SageMaker endpoint name; for local, the endpoint's --name (local)."
    ),
]
StackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack", "-s", help="gke/eks: the committed stack (namespace, workload, cloud)."
    ),
]
ProjectDirOpt = Annotated[
    str, typer.Option("--project-dir", help="Directory holding Pulumi.yaml and the stack files.")
]
PrometheusUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--prometheus-url",
        help="gke/eks: query this Prometheus API (your own, or a port-forward) instead of the "
        "managed one; no auth.",
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
        "--url", help="gke/eks: Triton's HTTP URL (load balancer or `kubectl port-forward`)."
    ),
]


def default_target(name: str) -> TargetName:
    """The member for ``name`` (a command's default ``--target``)."""
    return TargetName(name)
