"""Options that say where a deployed target is, shared by ``tdk metrics`` and ``tdk endpoint``."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class TargetName(StrEnum):
    sagemaker = "sagemaker"
    sagemaker_ic = "sagemaker-ic"
    gke = "gke"
    eks = "eks"
    local = "local"


TargetOpt = Annotated[
    TargetName,
    typer.Option("--target", help="Where the deployment runs: sagemaker, gke, eks, local."),
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
