"""``tdk invoke``: one inference request to any target, checked against the release manifest."""

from __future__ import annotations

import time
from typing import Annotated, Any

import numpy as np
import typer

from cli.common import (
    DEFAULT_TIMEOUT,
    EndpointOpt,
    EndpointUrlOpt,
    GrpcOpt,
    InputOpt,
    JsonBodyOpt,
    JsonOpt,
    ManifestStoreOpt,
    RegionOpt,
    TargetKind,
    TargetModelOpt,
    TargetOpt,
    TextOpt,
    TimeoutOpt,
    UrlOpt,
)
from cli.output import Output
from infra.clients.base import InferenceTarget
from infra.clients.deadline import check_timeout
from packager.manifest import MANIFEST_NAME, Manifest, ManifestModel
from tdk.errors import UsageError


def load_manifest(store_url: str, endpoint_url: str | None = None) -> Manifest:
    """The release manifest at ``store_url``."""
    from packager.stores import open_store

    store = open_store(store_url, endpoint_url)
    return Manifest.from_json(store.get_bytes(MANIFEST_NAME), store.describe(MANIFEST_NAME))


def resolve_model(manifest: Manifest, name: str, kind: TargetKind) -> ManifestModel:
    """``--target-model``: an archive name, or the model copy's (Triton) name."""
    del kind  # every target addresses a copy by either name
    if not name.endswith(".tar.gz"):
        return manifest.by_name(name)
    return manifest.by_target_model(name)


def open_target(
    kind: TargetKind,
    endpoint: str,
    store: str | None,
    url: str | None = None,
    grpc: bool = False,
    region: str | None = None,
    store_endpoint_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[InferenceTarget, Manifest]:
    """The target to send to and the manifest that describes its models."""
    manifest = target_manifest(kind, endpoint, store, store_endpoint_url)
    return open_client(kind, endpoint, url, grpc, region, timeout), manifest


def target_manifest(
    kind: TargetKind, endpoint: str, store: str | None, store_endpoint_url: str | None = None
) -> Manifest:
    """The release manifest of the target (local: the running endpoint's release by default)."""
    if kind is TargetKind.local:
        store = store or _local_state(endpoint).store
    if store is None:
        raise UsageError(f"--target {kind.value} needs --store", hint="pass the release URL")
    return load_manifest(store, store_endpoint_url)


def open_client(
    kind: TargetKind,
    endpoint: str,
    url: str | None = None,
    grpc: bool = False,
    region: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> InferenceTarget:
    """The client for the target (made after the request was checked against the manifest);
    every request it sends ends within ``timeout`` seconds in total."""
    if kind is TargetKind.local:
        from infra.targets.sagemaker.runtime import SageMakerRuntimeTarget

        state = _local_state(endpoint)
        return SageMakerRuntimeTarget(endpoint, endpoint_url=state.url, local=True, timeout=timeout)
    from infra.targets.operations import CLIENT_MODULES, Locator, load_client

    if kind.value in CLIENT_MODULES:  # a deployed target: its own client says how to invoke
        locator = Locator(endpoint=endpoint, region=region)
        return load_client(kind.value, locator).invoke(timeout)
    if url is None:
        raise UsageError("--target k8s needs --url", hint="e.g. --url http://127.0.0.1:8000")
    from infra.clients.triton_http import TritonHttpTarget

    return TritonHttpTarget(url, grpc, timeout)


def _local_state(endpoint: str) -> Any:
    from infra.targets.local.serve import read_state

    state = read_state(endpoint)
    if state is None:
        raise UsageError(
            f"no local endpoint named {endpoint!r} is running",
            hint="start one with `tdk local up --store URL --detach`",
        )
    return state


ExampleOpt = Annotated[
    bool,
    typer.Option(
        "--example", help="Send example inputs built from the manifest's signature (no --input)."
    ),
]


def gather_inputs(
    model: ManifestModel, options: list[str] | None, text: str | None, example: bool = False
) -> dict[str, np.ndarray]:
    from infra.clients.inputs import example_inputs, parse_input, text_inputs

    if example:
        if options or text is not None:
            raise UsageError(
                "--example builds every input itself",
                hint="drop --example, or drop --input/--text",
            )
        return example_inputs(model)

    arrays: dict[str, np.ndarray] = text_inputs(model, text) if text is not None else {}
    for option in options or []:
        name, array = parse_input(model, option)
        arrays[name] = array
    if not arrays:
        raise UsageError(
            f"no inputs given for {model.target_model}",
            hint="pass --input NAME=@file.npy / NAME='<json>', --text, or --example",
        )
    return arrays


def invoke(
    target_model: TargetModelOpt,
    target: TargetOpt = TargetKind.local,
    endpoint: EndpointOpt = "local",
    inputs: InputOpt = None,
    text: TextOpt = None,
    store: ManifestStoreOpt = None,
    url: UrlOpt = None,
    grpc: GrpcOpt = False,
    json_body: JsonBodyOpt = False,
    region: RegionOpt = None,
    endpoint_url: EndpointUrlOpt = None,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    json: JsonOpt = False,
    example: ExampleOpt = False,
) -> None:
    """Send one inference request; outputs as a table or --json."""
    out = Output(json_mode=json)
    check_timeout(timeout)
    manifest = target_manifest(target, endpoint, store, endpoint_url)
    model = resolve_model(manifest, target_model, target)
    arrays = gather_inputs(model, inputs, text, example)
    client = open_client(target, endpoint, url, grpc, region, timeout)
    try:
        request = client.prepare(model, arrays, binary=not json_body)
        started = time.perf_counter()
        response = client.send(model, request)
        latency_ms = (time.perf_counter() - started) * 1000
        outputs = client.decode(model, response)
    finally:
        client.close()
    if json:
        out.json(
            {
                "target": target.value,
                "target_model": model.target_model,
                "model": model.name,
                "latency_ms": round(latency_ms, 3),
                "outputs": {
                    name: {
                        "shape": list(value.shape),
                        "dtype": str(value.dtype),
                        "data": _plain(value),
                    }
                    for name, value in outputs.items()
                },
            }
        )
        return
    from infra.clients.inputs import summarize

    rows = [(name, str(value.dtype), summarize(value)) for name, value in outputs.items()]
    out.table(f"{model.target_model} ({latency_ms:.1f} ms)", ["output", "dtype", "value"], rows)


def _plain(value: np.ndarray) -> object:
    if value.dtype == np.object_:
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value.ravel()]
    return value.tolist()
