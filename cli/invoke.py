"""``tdk invoke``: one inference request to any target, checked against the release manifest."""

from __future__ import annotations

import time
from pathlib import Path
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
    ManifestReleaseOpt,
    RegionOpt,
    TargetModelOpt,
    TextOpt,
    TimeoutOpt,
)
from cli.locate import (
    EndpointOpt,
    ProjectDirOpt,
    StackOpt,
    StackOutputsOpt,
    StackTargetOpt,
    TargetName,
    UrlOpt,
    locate,
)
from cli.output import Output, terminal_safe
from infra.clients.base import InferenceTarget
from infra.clients.deadline import check_timeout
from packager.manifest import Manifest, ManifestModel
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.clients.generate import Generator
    from infra.targets.deployment import Given
    from infra.targets.operations import Locator


def load_manifest(store_url: str, endpoint_url: str | None = None) -> Manifest:
    """The release manifest at ``store_url``, read with the size and nesting limits."""
    from packager.stores import open_store
    from packager.stores.capped import read_manifest

    return read_manifest(open_store(store_url, endpoint_url))


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
    store = store or where.release or where.default_release()
    if store is None:
        raise UsageError(f"--target {target.value} needs --release", hint="pass the release URL")
    return load_manifest(store, store_endpoint_url)


def open_client(
    target: TargetName, where: Locator, grpc: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> InferenceTarget:
    """The client for the target (made after the request was checked against the manifest);
    every request it sends ends within ``timeout`` seconds in total."""
    del target  # the locator is the target's own
    return where.inference(grpc, timeout)


def locator(
    endpoint: str | None,
    region: str | None = None,
    stack: str | None = None,
    project_dir: str | Path = ".",
    url: str | None = None,
    store: str | None = None,
) -> Given:
    """What the options say of where the deployment is (``--stack`` is a stack name)."""
    from infra.targets.deployment import Given
    from infra.targets.stacks import check_stack_name

    if stack is not None:
        check_stack_name(stack)
    options = {"--endpoint": endpoint, "--region": region, "--url": url, "--release": store}
    return Given(options, stack, Path(project_dir))


ExampleOpt = Annotated[
    bool,
    typer.Option(
        "--example",
        help="Send example inputs built from the manifest's signature (integers within the "
        "range it records); --input NAME=... replaces one of them.",
    ),
]


PromptOpt = Annotated[
    str | None,
    typer.Option(
        "--prompt",
        help="Generate text from this prompt through Triton's generate endpoint "
        "(decoupled / LLM models; the vLLM backend's inputs).",
    ),
]
StreamOpt = Annotated[
    bool, typer.Option("--stream", help="With --prompt: generate_stream, tokens as they arrive.")
]
MaxTokensOpt = Annotated[
    int, typer.Option("--max-tokens", min=1, help="With --prompt: most tokens to generate.")
]
DEFAULT_MAX_TOKENS = 16


def generate_client(
    target: TargetName,
    where: Locator,
    model: ManifestModel,
    timeout: float,
) -> Generator:
    """A generate client for ``model`` on the deployment: ``--url`` (Triton's HTTP address),
    the target's own route (``TargetClient.generator``), or the URL its client reports (the
    local endpoint's)."""
    from infra.clients.generate import GenerateClient

    hint = (
        "pass --url with Triton's HTTP address (e.g. after `kubectl port-forward "
        "svc/<workload> 8000:8000`: --url http://127.0.0.1:8000); SageMaker MME does not "
        "serve decoupled models"
    )
    url = where.triton_url()
    if not url:
        try:
            client = where.client()
        except UsageError as exc:
            raise UsageError(
                f"{exc.message} (or --url, Triton's HTTP address, for the generate endpoint)",
                exc.hint or hint,
            ) from None
        own = client.generator(model, timeout)  # e.g. sagemaker-ic's response streams
        if own is not None:
            return own
        url = client.where().get("url")
    if not url:
        raise UsageError(
            f"--target {target.value} has no generate endpoint to reach without --url", hint
        )
    return GenerateClient(url, model.name, timeout)


def _generate(out: Output, client: Generator, prompt: str, stream: bool, max_tokens: int) -> None:
    """``invoke --prompt``: tokens printed as they arrive (human) or the summary (--json)."""
    import sys

    def show(text: str) -> None:
        sys.stdout.write(terminal_safe(text))  # a model's text may hold terminal escapes
        sys.stdout.flush()

    result = client.generate(prompt, max_tokens, stream, None if out.json_mode else show)
    if out.json_mode:
        out.json(result.summary())
        return
    sys.stdout.write("\n")
    out.info(
        f"{result.chunks} chunks, {result.output_tokens} output tokens, "
        f"TTFT {result.ttft_ms:.1f} ms, total {result.total_ms:.1f} ms"
    )


def no_tensor_options(**given: object) -> None:
    extra = [name for name, value in given.items() if value]
    if extra:
        raise UsageError(
            f"--prompt sends text to the generate endpoint; {', '.join(extra)} do not apply",
            hint=f"drop {', '.join(extra)}, or drop --prompt for a tensor request",
        )


def no_decoupled(model: ManifestModel) -> None:
    """A tensor request to a decoupled copy is refused by Triton's unary infer routes (HTTP and
    gRPC) on every target: point at --prompt before sending it."""
    if model.mme_left_out:
        raise UsageError(
            f"{model.target_model} is a decoupled (streaming) model: Triton's infer route does "
            f"not serve it ({model.mme_left_out})",
            hint="call its generate endpoint with --prompt TEXT (and --stream)",
        )


def gather_inputs(
    model: ManifestModel,
    options: list[str] | None,
    text: str | None,
    example: bool = False,
    batch: int = 1,
) -> dict[str, np.ndarray]:
    """The request's tensors: the given ones (``--input``, ``--text``); with ``example``, the
    example inputs with any given tensor replacing its example."""
    from infra.clients.inputs import example_inputs, parse_input, text_inputs, with_overrides

    if example:
        return with_overrides(model, example_inputs(model, batch), options, text)

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
    target: StackTargetOpt = None,
    endpoint: EndpointOpt = None,
    inputs: InputOpt = None,
    text: TextOpt = None,
    store: ManifestReleaseOpt = None,
    url: UrlOpt = None,
    stack: StackOpt = None,
    stack_outputs: StackOutputsOpt = None,
    project_dir: ProjectDirOpt = Path("."),
    grpc: GrpcOpt = False,
    json_body: JsonBodyOpt = False,
    region: RegionOpt = None,
    endpoint_url: EndpointUrlOpt = None,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    json: JsonOpt = False,
    example: ExampleOpt = False,
    prompt: PromptOpt = None,
    stream: StreamOpt = False,
    max_tokens: MaxTokensOpt = DEFAULT_MAX_TOKENS,
) -> None:
    """Send one inference request; outputs as a table or --json. With --prompt, generate text
    (--stream prints tokens as they arrive)."""
    out = Output(json_mode=json)
    check_timeout(timeout)
    target, where = locate(
        target, locator(endpoint, region, stack, project_dir, url, store), stack_outputs
    )
    if prompt is None and stream:
        raise UsageError("--stream needs --prompt", hint="add --prompt TEXT")
    if prompt is not None:
        no_tensor_options(
            **{"--input": inputs, "--text": text, "--example": example, "--grpc": grpc},
            **{"--json-body": json_body},
        )
    manifest = target_manifest(target, where, store, endpoint_url)
    model = resolve_model(manifest, target_model)
    if prompt is not None:
        _generate(out, generate_client(target, where, model, timeout), prompt, stream, max_tokens)
        return
    no_decoupled(model)
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
