"""Options shared by several commands, defined once as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of tables.")]
StoreOpt = Annotated[
    str,
    typer.Option(
        "--store", help="Release URL written by `tdk package --dest` (file://, s3://, gs://)."
    ),
]
EndpointUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint-url",
        envvar="TDK_S3_ENDPOINT_URL",
        help="S3-compatible endpoint for s3:// stores (MinIO, moto, ...).",
    ),
]
RegionOpt = Annotated[
    str | None, typer.Option("--region", help="AWS region (default: the AWS SDK's configuration).")
]
