"""``tdk invoke``: one inference request to any target, checked against the release manifest."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer

from cli.common import (
    DEFAULT_TIMEOUT,
    GrpcOpt,
    InputOpt,
    JsonBodyOpt,
    JsonOpt,
    TargetModelOpt,
    TextOpt,
    TimeoutOpt,
)
from cli.groups import grouped
from cli.locate import DeploymentOptions
from cli.output import Output, terminal_safe
from infra.clients.deadline import check_timeout
from infra.perf.bench.genrequest import DEFAULT_MAX_TOKENS
from packager.manifest import ManifestModel
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.clients.generate import Generator


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


def no_decoupled(model: ManifestModel, how: str = "with --prompt TEXT (and --stream)") -> None:
    """A tensor request to a decoupled copy is refused by Triton's unary infer routes (HTTP and
    gRPC) on every target: point at its generate endpoint (``how``) before sending it."""
    if model.mme_left_out:
        raise UsageError(
            f"{model.target_model} is a decoupled (streaming) model: Triton's infer route does "
            f"not serve it ({model.mme_left_out})",
            hint=f"call its generate endpoint {how}",
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


@grouped
def invoke(
    target_model: TargetModelOpt,
    deployment: DeploymentOptions,
    inputs: InputOpt = None,
    text: TextOpt = None,
    grpc: GrpcOpt = False,
    json_body: JsonBodyOpt = False,
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
    located = deployment.open()
    if prompt is None and stream:
        raise UsageError("--stream needs --prompt", hint="add --prompt TEXT")
    if prompt is not None:
        no_tensor_options(
            **{"--input": inputs, "--text": text, "--example": example, "--grpc": grpc},
            **{"--json-body": json_body},
        )
    model = located.model(target_model)
    if prompt is not None:
        _generate(out, located.generator(model, timeout), prompt, stream, max_tokens)
        return
    no_decoupled(model)
    arrays = gather_inputs(model, inputs, text, example)
    client = located.inference(grpc, timeout)
    try:
        request = client.prepare(model, arrays, binary=not json_body)
        started = time.perf_counter()
        response = client.send(model, request)
        latency_ms = (time.perf_counter() - started) * 1000
        outputs = client.decode(model, response)
    finally:
        client.close()
    from infra.clients.inputs import outputs_json, summarize

    if json:
        out.json(
            {
                "target": located.target,
                "target_model": model.target_model,
                "model": model.name,
                "latency_ms": round(latency_ms, 3),
                "outputs": outputs_json(outputs),
            }
        )
        return
    rows = [(name, str(value.dtype), summarize(value)) for name, value in outputs.items()]
    out.table(f"{model.target_model} ({latency_ms:.1f} ms)", ["output", "dtype", "value"], rows)
