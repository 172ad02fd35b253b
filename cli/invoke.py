"""``tdk invoke``: one inference request to any target, checked against the release manifest."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer

from cli.common import (
    DEFAULT_TIMEOUT,
    EndpointUrlOpt,
    GrpcOpt,
    InputOpt,
    JsonBodyOpt,
    JsonOpt,
    ManifestStoreOpt,
    RegionOpt,
    TargetModelOpt,
    TextOpt,
    TimeoutOpt,
)
from cli.locate import (
    EndpointOpt,
    ProjectDirOpt,
    StackOpt,
    TargetName,
    TargetOpt,
    UrlOpt,
    default_target,
)
from cli.output import Output
from infra.clients.base import InferenceTarget
from infra.clients.deadline import check_timeout
from packager.manifest import MANIFEST_NAME, Manifest, ManifestModel
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.targets.operations import Locator


def load_manifest(store_url: str, endpoint_url: str | None = None) -> Manifest:
    """The release manifest at ``store_url``."""
    from packager.stores import open_store

    store = open_store(store_url, endpoint_url)
    return Manifest.from_json(store.get_bytes(MANIFEST_NAME), store.describe(MANIFEST_NAME))


def resolve_model(manifest: Manifest, name: str) -> ManifestModel:
    """``--target-model``: an archive name, or the model copy's (Triton) name (every target
    addresses a copy by either)."""
    if not name.endswith(".tar.gz"):
        return manifest.by_name(name)
    return manifest.by_target_model(name)


def open_target(
    target: TargetName,
    where: Locator,
    store: str | None,
    grpc: bool = False,
    store_endpoint_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[InferenceTarget, Manifest]:
    """The target to send to and the manifest that describes its models."""
    manifest = target_manifest(target, where, store, store_endpoint_url)
    return open_client(target, where, grpc, timeout), manifest


def target_manifest(
    target: TargetName, where: Locator, store: str | None, store_endpoint_url: str | None = None
) -> Manifest:
    """The release manifest of the deployment (the local endpoint: its release by default)."""
    from infra.targets import registry

    entry = registry.get(target.value)
    store = store or entry.default_store(where)
    if store is None:
        raise UsageError(f"--target {entry.name} needs --store", hint="pass the release URL")
    return load_manifest(store, store_endpoint_url)


def open_client(
    target: TargetName, where: Locator, grpc: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> InferenceTarget:
    """The client for the target (made after the request was checked against the manifest);
    every request it sends ends within ``timeout`` seconds in total."""
    from infra.targets import registry

    return registry.get(target.value).inference(where, grpc, timeout)


def locator(
    endpoint: str | None,
    region: str | None = None,
    stack: str | None = None,
    project_dir: str = ".",
    url: str | None = None,
) -> Locator:
    """Where the deployment is, as the options gave it (``--stack`` is a stack name)."""
    from infra.targets.operations import Locator
    from infra.targets.registry import check_stack_name

    if stack is not None:
        check_stack_name(stack)
    return Locator(endpoint=endpoint, region=region, stack=stack, project_dir=project_dir, url=url)


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
    target: TargetOpt = default_target("local"),
    endpoint: EndpointOpt = "local",
    inputs: InputOpt = None,
    text: TextOpt = None,
    store: ManifestStoreOpt = None,
    url: UrlOpt = None,
    stack: StackOpt = None,
    project_dir: ProjectDirOpt = ".",
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
    where = locator(endpoint, region, stack, project_dir, url)
    manifest = target_manifest(target, where, store, endpoint_url)
    model = resolve_model(manifest, target_model)
    arrays = gather_inputs(model, inputs, text, example)
    client = open_client(target, where, grpc, timeout)
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
