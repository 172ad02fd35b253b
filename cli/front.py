"""``tdk front``: the kit's multi-model front beside a Triton it does not start (a pod)."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import EndpointUrlOpt, ReleaseOpt
from cli.output import Output
from infra.targets.local.options import (
    POD_HEADROOM_MAX_MODELS,
    POD_HEADROOM_MODELS,
    EndpointOptions,
    default_of,
    help_of,
)
from tdk.errors import UsageError

app = typer.Typer(
    help="The multi-model front of a Kubernetes pod (k8sModelMode: mme).", no_args_is_help=True
)

TritonUrlOpt = Annotated[str, typer.Option("--triton-url", help=help_of("triton_url"))]
ModelDirOpt = Annotated[str, typer.Option("--model-dir", help=help_of("model_dir"))]
TritonGrpcOpt = Annotated[
    str | None, typer.Option("--triton-grpc", help=help_of("triton_grpc"), show_default=False)
]
CacheDirOpt = Annotated[
    str, typer.Option("--cache-dir", help="The front's own directory: downloads and staging.")
]
CacheBytesOpt = Annotated[int, typer.Option("--cache-bytes", help=help_of("cache_bytes"))]
BudgetOpt = Annotated[int, typer.Option("--memory-budget-bytes", help=help_of("memory_budget"))]
MaxLoadedOpt = Annotated[int, typer.Option("--max-loaded-models", help=help_of("max_loaded"))]
ListenOpt = Annotated[str, typer.Option("--listen", help="HOST:PORT to serve on.")]
HeadroomOpt = Annotated[int, typer.Option("--headroom-models", help=help_of("headroom_models"))]
HeadroomMaxOpt = Annotated[int, typer.Option("--headroom-max-models", help=help_of("headroom_max"))]
#: loaded models when only a memory budget bounds them: beyond any pod's Triton
UNBOUNDED_MODELS = 100_000


def parse_listen(listen: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::]:8080`` for IPv6); UsageError naming ``--listen`` otherwise."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) <= 65535:
        raise UsageError(f"--listen {listen!r} is not HOST:PORT", hint="e.g. --listen 0.0.0.0:8080")
    return host, int(port)


@app.command("serve")
def serve(
    release: ReleaseOpt,
    triton_url: TritonUrlOpt,
    model_dir: ModelDirOpt,
    cache_dir: CacheDirOpt,
    cache_bytes: CacheBytesOpt = default_of("cache_bytes"),
    memory_budget_bytes: BudgetOpt = default_of("memory_budget"),
    max_loaded_models: MaxLoadedOpt = UNBOUNDED_MODELS,
    listen: ListenOpt = "0.0.0.0:8080",
    endpoint_url: EndpointUrlOpt = None,
    headroom_models: HeadroomOpt = POD_HEADROOM_MODELS,
    headroom_max_models: HeadroomMaxOpt = POD_HEADROOM_MAX_MODELS,
    triton_grpc: TritonGrpcOpt = None,
) -> None:
    """Serve `/invocations` (X-Amzn-SageMaker-Target-Model), Triton's v2 inference by copy name,
    `/ping` and `/metrics`, loading each copy into the pod's Triton on its first request (the
    store's default credentials: the pod's workload identity) and unloading the least recently
    used idle one beyond the memory budget, ahead of the next load (--headroom-models)."""
    from infra.targets.local import serve as serving

    host, port = parse_listen(listen)
    options = EndpointOptions(
        release=release,
        port=port,
        host=host,
        max_loaded=max_loaded_models,
        cache_bytes=cache_bytes,
        memory_budget=memory_budget_bytes,
        headroom_models=headroom_models,
        headroom_max=headroom_max_models,
        workdir=cache_dir,
        store_endpoint_url=endpoint_url,
        triton_url=triton_url,
        triton_grpc=triton_grpc,
        model_dir=model_dir,
    )
    out = Output(json_mode=False)
    out.info(f"front on {host}:{port} for the Triton at {triton_url}; release {release}")
    serving.run_front(options, announce=lambda url: out.info(f"serving ({url})"))
