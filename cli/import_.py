"""``tdk import SOURCE --name NAME --out REPO``: the user's model as a Triton model directory."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from cli.common import JsonOpt
from cli.output import Output

SourceArg = Annotated[
    Path,
    typer.Argument(
        help="An ONNX file, or a local Hugging Face model directory (config.json + weights).",
        metavar="SOURCE",
    ),
]
NameOpt = Annotated[
    str, typer.Option("--name", help="The model's name (directory and Triton name).")
]
OutOpt = Annotated[Path, typer.Option("--out", help="The repository to write <out>/<name> in.")]
MaxBatchOpt = Annotated[
    int | None,
    typer.Option(
        "--max-batch-size",
        min=0,
        help="max_batch_size to write (default: what Triton completes, 4, with dynamic batching).",
    ),
]
TokenizerOpt = Annotated[
    bool,
    typer.Option(
        "--tokenizer",
        help="Hugging Face: also write the tokenizer as a Python-backend model and an "
        "ensemble <name>_pipeline (text in, logits out).",
    ),
]
OpsetOpt = Annotated[int, typer.Option("--opset", min=7, help="Hugging Face: ONNX opset.")]


def import_model(
    source: SourceArg,
    name: NameOpt,
    out: OutOpt,
    max_batch_size: MaxBatchOpt = None,
    tokenizer: TokenizerOpt = False,
    opset: OpsetOpt = 17,
    json: JsonOpt = False,
) -> None:
    """Write a Triton model directory from an ONNX file or a Hugging Face model directory,
    with the config Triton would complete (dynamic batching on); Neuron artifacts are refused."""
    from packager.config import dump_config
    from packager.importer import import_onnx, refuse_neuron
    from tdk.errors import UsageError

    if not source.exists():
        raise UsageError(
            f"{source}: no such file or directory", hint="give an ONNX file or a model directory"
        )
    refuse_neuron(source)
    if source.is_dir():
        from packager.hf_export import import_huggingface

        imported = import_huggingface(source, name, out, max_batch_size, tokenizer, opset)
    elif tokenizer:
        raise UsageError(
            "--tokenizer needs a Hugging Face model directory (its tokenizer files)",
            hint="drop --tokenizer for an ONNX file",
        )
    else:
        imported = import_onnx(source, name, out, max_batch_size)
    output = Output(json_mode=json)
    if json:
        output.json(
            {
                "model": str(imported.path),
                "kind": imported.kind,
                "models": [str(p) for p in imported.written],
                "config": dump_config(imported.config),
                "notes": list(imported.notes),
            }
        )
        return
    for path in imported.written:
        output.info(f"wrote {path}")
    output.console.print(dump_config(imported.config), highlight=False, markup=False)
    for note in imported.notes:
        output.warn(note)
    output.info(escape(next_step(out)))


def next_step(out: Path) -> str:
    """import's last line: the commands that take the new repository on, as they paste."""
    repo = shlex.quote(str(out))
    release = shlex.quote(str(out.parent / "release"))
    return (
        f"next: tdk validate {repo} && tdk package {repo} --release {release} "
        "(the config is yours to edit: tdk tune tunes it)"
    )
