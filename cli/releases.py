"""``tdk releases``: the releases a store holds, oldest first, to pick one to roll back to."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import STORE_SCHEMES, EndpointUrlOpt, JsonOpt
from cli.output import Output
from tdk.errors import UsageError


def releases(
    store: Annotated[
        str,
        typer.Option(
            "--store",
            help=f"Store URL holding releases, one per prefix ({STORE_SCHEMES}).",
        ),
    ],
    endpoint_url: EndpointUrlOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """List the releases under a store (each prefix with a manifest), oldest first."""
    from packager.releases import list_releases

    out = Output(json_mode=json_mode)
    found = list_releases(store, endpoint_url)
    if json_mode:
        out.json([r.as_dict() for r in found])
        return
    if not found:
        raise UsageError(
            f"no release under {store}: no manifest.json in it or below it",
            hint="publish one with `tdk package REPO --release URL`, or name the store's prefix",
        )
    rows = [
        (r.url, "unreadable", "-", "-") if r.problem else
        (r.url, r.created_at, str(r.models), f"{r.total_bytes:,}")
        for r in found
    ]  # fmt: skip
    out.table(f"releases under {store}", ["release", "created", "models", "bytes"], rows)
    for bad in (r for r in found if r.problem):
        out.warn(f"{bad.url} is not a release to roll back to: {bad.problem}")
