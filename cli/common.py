"""Options shared by several commands, defined once as ``Annotated`` aliases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from infra.clients.deadline import DEFAULT_TIMEOUT_S
from packager.stores import scheme_list
from tdk.numbers import check_number, parse_number


def number(
    option: str,
    low: float | None = None,
    high: float | None = None,
    *,
    above: bool = False,
    integer: bool = False,
) -> Callable[[Any], Any]:
    """A typer ``parser=`` for a numeric option: written in ASCII digits, finite, in range
    (``tdk.numbers``): ``nan``, ``1e999``, ``0_1`` and other scripts' digits are refused with
    the option's name, where click's own int/float and ``min=`` let them through."""

    def parse(value: Any) -> Any:
        if isinstance(value, str):
            return parse_number(value, option, low, high, above=above, integer=integer)
        return check_number(value, option, low, high, above=above, integer=integer)

    return parse


MAX_SECONDS = 24 * 3600.0  # a timeout or window beyond a day is a typo

#: the store URL schemes every --release / --store takes (the registered store kinds)
STORE_SCHEMES = scheme_list()
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of tables.")]
ReleaseOpt = Annotated[
    str,
    typer.Option(
        "--release",
        help=f"Release URL written by `tdk package --release` ({STORE_SCHEMES}).",
    ),
]
EndpointUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--s3-endpoint-url",
        envvar="TDK_S3_ENDPOINT_URL",
        help="Endpoint of an S3-compatible store (MinIO, moto, ...).",
    ),
]
RegionOpt = Annotated[
    str | None, typer.Option("--region", help="AWS region (default: the AWS SDK's configuration).")
]


TargetModelOpt = Annotated[
    str,
    typer.Option(
        "--target-model",
        help="TargetModel (archive name, e.g. bert-0.tar.gz) or the model copy's name (bert-0).",
    ),
]
ManifestReleaseOpt = Annotated[
    str | None,
    typer.Option(
        "--release", help="Release URL whose manifest gives the signature (local: the endpoint's)."
    ),
]
GrpcOpt = Annotated[bool, typer.Option("--grpc", help="Kubernetes targets: use Triton's gRPC API.")]
JsonBodyOpt = Annotated[
    bool, typer.Option("--json-body", help="Send a plain JSON body instead of binary+json.")
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", help="NAME=@file.npy or NAME='<json>' (repeatable)."),
]
SamplesOpt = Annotated[
    Path | None,
    typer.Option(
        "--samples",
        help="A directory of sample requests (.npz, or .json {NAME: [...]}), sent in turn "
        "instead of example inputs.",
    ),
]
TextOpt = Annotated[str | None, typer.Option("--text", help="Value of the model's BYTES input.")]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        parser=number("--timeout", 0, MAX_SECONDS, above=True),
        metavar="SECONDS",
        help="Seconds one request may take in total: connect, headers and the whole body.",
    ),
]
DEFAULT_TIMEOUT = DEFAULT_TIMEOUT_S
