"""``tdk import``: turn the user's model into a Triton model directory they own.

An ONNX file becomes ``<out>/<name>/1/model.onnx`` with the config Triton's ONNX Runtime backend
would complete (``packager.onnx_signature``: batching with dynamic batching on when every tensor
has a variable first dimension) written out as ``config.pbtxt``. A local Hugging Face model
directory is exported to ONNX first (``packager.hf_export``, the optional ``import`` extra).
Neuron artifacts are refused: they run only on AWS Inferentia / Trainium.

Nothing is half-written: the model is staged in a hidden directory beside the destination,
checked with ``tdk validate``'s rules, and renamed into place; an existing directory of that
name is never replaced.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME, dump_config
from packager.inputs import INPUT_HINT, copy_input, input_problem, open_input
from packager.names import name_problem
from packager.onnx_signature import completed_config, read_graph
from tdk.errors import ConfigError, TdkError, UnsafeInputError, UsageError, ValidationFailed

NEURON_HINT = (
    "import the model it was compiled from instead: the Hugging Face directory (or the "
    "torch.onnx export) you passed to torch_neuronx.trace / neuronx-cc"
)
_EXTERNAL = 1  # onnx.TensorProto.DataLocation.EXTERNAL


@dataclass(frozen=True)
class Imported:
    """The model directory written, its config, what it came from and what to know."""

    path: Path
    config: Any  # inference.ModelConfig as written
    kind: str  # "onnx" or "huggingface"
    notes: tuple[str, ...] = ()
    written: tuple[Path, ...] = ()  # every model directory written (tokenizer, ensemble too)


def check_destination(name: str, out: Path) -> Path:
    """``out/name``, after the name rules (SageMaker TargetModel and Triton) and refusing an
    existing directory: an import never replaces what is there."""
    problem = name_problem(name)
    if problem:
        raise UsageError(
            f"--name {name!r} {problem}",
            hint="use letters, digits, '.', '_' and '-', starting with a letter, digit or '_'",
        )
    destination = out / name
    if destination.exists() or destination.is_symlink():
        raise UsageError(
            f"{destination} already exists; tdk import never replaces a model directory",
            hint="choose another --name or --out, or remove that directory first",
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is not a directory", hint="give a repository directory")
    return destination


def neuron_reason(source: Path) -> str | None:
    """Why ``source`` is a Neuron artifact (compiled for AWS NeuronCores), None if it is not."""
    if source.is_file() and source.suffix == ".neff":
        return f"{source.name} is a Neuron executable (NEFF) compiled by neuronx-cc"
    if source.is_dir():
        neffs = sorted(p.name for p in source.rglob("*.neff"))
        if neffs:
            return f"{source} holds Neuron executables ({', '.join(neffs[:3])})"
        return None
    if source.is_file() and zipfile.is_zipfile(source):
        try:
            with zipfile.ZipFile(source) as archive:
                code = [n for n in archive.namelist() if "/code/" in n and n.endswith(".py")]
                if any(b"neuron" in archive.read(n) for n in code[:50]):
                    return f"{source.name} is a TorchScript module traced with torch_neuronx"
        except (OSError, zipfile.BadZipFile):
            return None
    return None


def refuse_neuron(source: Path) -> None:
    reason = neuron_reason(source)
    if reason is not None:
        raise TdkError(
            f"{reason}: it runs only on AWS Inferentia / Trainium NeuronCores, and Triton on a "
            "GPU (or CPU) cannot load it",
            hint=NEURON_HINT,
        )


def import_onnx(source: Path, name: str, out: Path, max_batch_size: int | None = None) -> Imported:
    """``source`` (an ONNX file) as ``out/name`` with its completed config."""
    destination = check_destination(name, out)
    with os.fdopen(open_input(source.parent, source.name), "rb") as handle:
        data = handle.read()  # the bytes parsed are the bytes written
    graph = read_graph(source, data)
    completed = completed_config(graph, name)
    batches = completed.max_batch_size > 0
    config = owned_config(completed, max_batch_size)
    external = _external_files(graph, source)

    def fill(model: Path) -> None:
        (model / "1").mkdir(parents=True)
        (model / "1" / "model.onnx").write_bytes(data)
        for rel in external:
            (model / "1" / rel).parent.mkdir(parents=True, exist_ok=True)
            copy_input(source.parent, rel, model / "1" / rel)
        (model / CONFIG_NAME).write_text(dump_config(config), encoding="utf-8")

    stage_model(destination, fill)
    if config.max_batch_size:
        notes = []
    elif batches:
        notes = [
            "max_batch_size 0 as asked: each request's tensors are passed whole (their first "
            "dimension is the batch), and Triton does not batch requests together"
        ]
    else:
        notes = [_no_batching_note(graph)]
    return Imported(destination, config, "onnx", tuple(notes), (destination,))


def owned_config(completed: Any, max_batch_size: int | None) -> Any:
    """The completed config as the user keeps it: backend named, file name left default,
    ``max_batch_size`` as asked (only for a model that batches; 0 turns batching off, and each
    tensor's dims then carry the batch dimension, as Triton reads a config without batching:
    https://github.com/triton-inference-server/server/blob/main/docs/user_guide/model_configuration.md#maximum-batch-size,
    checked 2026-12-07)."""
    completed.ClearField("platform")
    completed.ClearField("default_model_filename")
    if max_batch_size is not None:
        if completed.max_batch_size == 0 and max_batch_size > 0:
            raise UsageError(
                f"--max-batch-size {max_batch_size}: the model cannot batch (not every input and "
                "output has a variable first dimension)",
                hint="drop --max-batch-size, or re-export with a dynamic batch axis",
            )
        if completed.max_batch_size > 0 and max_batch_size == 0:
            for tensor in (*completed.input, *completed.output):
                tensor.dims.insert(0, -1)  # the batch axis, now a dimension of its own
        completed.max_batch_size = max_batch_size
        if max_batch_size > 1:
            completed.dynamic_batching.SetInParent()
        else:
            completed.ClearField("dynamic_batching")
    return completed


def _no_batching_note(graph: Any) -> str:
    from packager.onnx_signature import graph_inputs, graph_outputs

    tensors = graph_inputs(graph) + graph_outputs(graph)
    fixed = [t.name for t in tensors if not t.dims or t.dims[0] != -1]
    return (
        f"max_batch_size 0: {', '.join(fixed[:3])} has no variable first dimension, so Triton "
        "cannot batch requests; re-export with a dynamic batch axis to batch"
    )


def _external_files(graph: Any, source: Path) -> list[str]:
    """Relative paths of the external-data files ``graph``'s initializers name (each must lie
    beside ``source``, no link on the way to it: it is copied into the release)."""
    found: set[str] = set()
    for init in graph.initializer:
        if init.data_location != _EXTERNAL:
            continue
        location = next((e.value for e in init.external_data if e.key == "location"), "")
        rel = Path(location)
        if not location or rel.is_absolute() or ".." in rel.parts:
            raise ConfigError(
                f"{source}: initializer {init.name!r} names external data {location!r} outside "
                "the model's directory",
                hint="save the model with its external data beside it (onnx.save with "
                "location=<relative file name>)",
            )
        problem = input_problem(source.parent, location)
        if problem:
            raise UnsafeInputError(
                f"{source}: external data of initializer {init.name!r}: {problem}",
                hint=INPUT_HINT,
            )
        if not (source.parent / rel).is_file():
            raise ConfigError(
                f"{source}: external data file {source.parent / rel} is missing",
                hint="copy it beside the model, or save the model without external data",
            )
        found.add(location)
    return sorted(found)


def stage_model(destination: Path, fill: Callable[[Path], None], also: Sequence[Path] = ()) -> None:
    """Build the model in a hidden directory beside ``destination`` with ``fill``, check it
    with ``tdk validate``'s rules (an ensemble with the models ``also`` given), then rename it
    into place; on any failure nothing stays."""
    from packager.validate.runner import require_valid

    out = destination.parent
    created = [p for p in (out, *out.parents) if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tdk-import-", dir=out))
    try:
        model = staging / destination.name
        fill(model)
        try:
            require_valid([model, *also])
        except ValidationFailed as exc:
            raise _as_destination(exc, model, destination) from None
        os.rename(model, destination)  # same directory: atomic; refuses a non-empty target
        created = []
    except OSError as exc:
        raise TdkError(
            f"cannot write {destination}: {exc.strerror or exc}",
            hint=f"check that {out} is writable and has room",
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for directory in created:  # only the (empty) directories made for this import
            try:
                directory.rmdir()
            except OSError:
                break


def _as_destination(exc: ValidationFailed, staged: Path, destination: Path) -> ValidationFailed:
    """The staged model's findings told of ``destination`` (the staging folder is gone when
    the user reads them), and that nothing was written."""
    message = exc.message.replace(str(staged), str(destination))
    message = message.replace("nothing was published", f"nothing was written to {destination}")
    return ValidationFailed(
        message,
        exc.findings,
        hint="the model as imported would not load in Triton: check the flags given to "
        "`tdk import` (e.g. --max-batch-size), or the model itself",
    )
