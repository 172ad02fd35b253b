"""Options that name a target and say where a deployment is, shared by every command that
takes ``--target`` (invoke, bench, metrics, endpoint, validate, plan); the option groups
(``cli.groups``) of the commands that open a deployment (``infra.targets.deployment``).

The ``--target`` choices come from the target registry (``infra.targets.registry``), so every
command offers the same ones and a registered target appears everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import EndpointUrlOpt, ManifestReleaseOpt, RegionOpt
from cli.groups import option_group
from infra.targets import registry

if TYPE_CHECKING:
    from infra.targets.deployment import Deployment, Given

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


@option_group
@dataclass(frozen=True)
class WhereOptions:
    """Where a deployment is: the options of ``tdk endpoint status|wait``, and of every command
    that opens a deployment."""

    endpoint: EndpointOpt = None
    target: StackTargetOpt = None
    stack: StackOpt = None
    outputs: StackOutputsOpt = None
    url: UrlOpt = None
    project_dir: ProjectDirOpt = Path(".")
    region: RegionOpt = None

    def given(self) -> Given:
        """What the options say, as the library takes it (plain strings)."""
        from infra.targets.deployment import Given

        target = self.target.value if self.target is not None else None
        return Given(
            target=target,
            stack=self.stack,
            project_dir=self.project_dir,
            outputs=self.outputs,
            endpoint=self.endpoint,
            region=self.region,
            url=self.url,
        )

    def open(self) -> Deployment:
        """The located deployment (``infra.targets.deployment.open_deployment``)."""
        from infra.targets.deployment import open_deployment

        return open_deployment(self.given())


@option_group
@dataclass(frozen=True)
class MetricsWhereOptions(WhereOptions):
    """``tdk metrics``: where the deployment is and where its figures are read."""

    prometheus_url: PrometheusUrlOpt = None
    workspace_id: WorkspaceOpt = None

    def given(self) -> Given:
        return replace(
            super().given(), prometheus_url=self.prometheus_url, workspace_id=self.workspace_id
        )


@option_group
@dataclass(frozen=True)
class DeploymentOptions(WhereOptions):
    """invoke, bench: where the deployment is and the release that describes its models."""

    release: ManifestReleaseOpt = None
    s3_endpoint_url: EndpointUrlOpt = None

    def given(self) -> Given:
        return replace(super().given(), release=self.release, s3_endpoint_url=self.s3_endpoint_url)
