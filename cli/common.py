"""Options shared by several commands, defined once as ``Annotated`` aliases."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from infra.clients.deadline import DEFAULT_TIMEOUT_S

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


class TargetKind(StrEnum):
    local = "local"
    sagemaker = "sagemaker"
    sagemaker_ic = "sagemaker-ic"
    k8s = "k8s"


TargetOpt = Annotated[
    TargetKind, typer.Option("--target", help="Where to send it: local, sagemaker or k8s.")
]
EndpointOpt = Annotated[
    str, typer.Option("--endpoint", help="Endpoint name (local: the name given to `tdk local up`).")
]
TargetModelOpt = Annotated[
    str,
    typer.Option(
        "--target-model",
        help="TargetModel (archive name, e.g. bert-0.tar.gz) or the model copy's name (bert-0).",
    ),
]
ManifestStoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store", help="Release URL whose manifest gives the signature (local: the endpoint's)."
    ),
]
UrlOpt = Annotated[
    str | None, typer.Option("--url", help="k8s: Triton's HTTP (or gRPC with --grpc) address.")
]
GrpcOpt = Annotated[bool, typer.Option("--grpc", help="k8s: use Triton's gRPC API.")]
JsonBodyOpt = Annotated[
    bool, typer.Option("--json-body", help="Send a plain JSON body instead of binary+json.")
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", help="NAME=@file.npy or NAME='<json>' (repeatable)."),
]
TextOpt = Annotated[str | None, typer.Option("--text", help="Value of the model's BYTES input.")]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="Seconds one request may take in total: connect, headers and the whole body.",
    ),
]
DEFAULT_TIMEOUT = DEFAULT_TIMEOUT_S
