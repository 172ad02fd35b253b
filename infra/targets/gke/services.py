"""``tdk:gcp:ProjectServices``: the Google APIs the stack uses, enabled before anything else."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp


class ProjectServices(pulumi.ComponentResource):
    """One ``gcp.projects.Service`` per API; ``disable_on_destroy=False`` because other
    workloads of the project may rely on them. ``resources`` is what dependents wait on."""

    def __init__(
        self,
        name: str,
        project: str,
        services: Sequence[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:gcp:ProjectServices", name, None, opts)
        self.resources: list[pulumi.Resource] = [
            gcp.projects.Service(
                f"{name}-{service.split('.')[0]}",
                project=project,
                service=service,
                disable_on_destroy=False,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for service in services
        ]
        self.register_outputs({"services": list(services)})
