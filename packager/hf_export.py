"""``tdk import`` of a local Hugging Face model directory: exported to ONNX with ``torch.onnx``
(dynamic batch and sequence axes), then imported as an ONNX file; with ``--tokenizer`` its
WordPiece tokenizer becomes a Python-backend model and an ensemble takes text, as the samples'
``text_pipeline``. Needs the ``import`` extra (torch, transformers); never reaches a hub.
"""

from __future__ import annotations

import contextlib
import inspect
import shutil
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME, dump_config, new_config
from packager.importer import Imported, check_destination, import_onnx, stage_model
from packager.inputs import copy_input, scan_model_dir
from tdk.bounded import load_json
from tdk.errors import TdkError, UsageError

TEXT_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TOKENIZER_MODEL = Path(__file__).with_name("hf_tokenizer_model.py")  # copied as model.py
MAX_LENGTH = 128  # the tokenizer's padded length, at most the model's position table


def import_huggingface(
    source: Path,
    name: str,
    out: Path,
    max_batch_size: int | None = None,
    tokenizer: bool = False,
    opset: int = 17,
) -> Imported:
    """``source`` exported to ONNX and written as ``out/name`` (and, with ``tokenizer``,
    ``out/<name>_tokenizer`` and the ensemble ``out/<name>_pipeline``). The directory is
    refused whole if it holds a link or a special file, as ``tdk package`` refuses them."""
    scan_model_dir(source)
    if not (source / "config.json").is_file():
        raise UsageError(
            f"{source} is not a Hugging Face model directory (no config.json)",
            hint="give the directory save_pretrained wrote, or an ONNX file",
        )
    check_destination(name, out)
    if tokenizer and max_batch_size == 0:
        raise UsageError(
            "--tokenizer with --max-batch-size 0: the pipeline batches the tokenizer's output "
            "into the model",
            hint="drop --max-batch-size 0, or drop --tokenizer and tokenize in the client",
        )
    if tokenizer:
        for extra in (f"{name}_tokenizer", f"{name}_pipeline"):
            check_destination(extra, out)
        if not (source / "vocab.txt").is_file():
            raise UsageError(
                f"--tokenizer: {source} has no vocab.txt (a WordPiece tokenizer, as BERT's)",
                hint="drop --tokenizer and tokenize in the client",
            )
    with tempfile.TemporaryDirectory(prefix="tdk-export-") as work:
        exported = Path(work) / "model.onnx"
        export_onnx(source, exported, opset)
        imported = import_onnx(exported, name, out, max_batch_size)
    written = [imported.path]
    if tokenizer:
        try:
            written += write_pipeline(source, imported, out)
        except BaseException:
            for path in written:  # nothing half-written: the model goes too
                shutil.rmtree(path, ignore_errors=True)
            raise
    return replace(imported, kind="huggingface", written=tuple(written))


def _libraries() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise TdkError(
            f"importing a Hugging Face model needs torch and transformers ({exc})",
            hint="in the kit's clone: `make extra EXTRA=import` (torch's CPU wheel), or export "
            "to ONNX yourself and "
            "import the .onnx file",
        ) from exc
    transformers.logging.set_verbosity_error()
    with contextlib.suppress(AttributeError):
        transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def export_onnx(source: Path, path: Path, opset: int) -> None:
    """``source``'s model as ONNX at ``path``: its text inputs with batch and sequence axes
    dynamic; each output's batch axis and every axis that follows the sequence length."""
    torch, transformers = _libraries()
    architecture = _architecture(source)
    loader = getattr(transformers, architecture, None)
    if not isinstance(loader, type) or not hasattr(loader, "from_pretrained"):
        loader = transformers.AutoModel
    try:  # weights_only: a pickle's tensors are read, its code never runs (transformers 5.25)
        model = loader.from_pretrained(source, local_files_only=True, weights_only=True).eval()
    except Exception as exc:  # a hostile directory makes transformers and torch raise anything
        raise UsageError(
            f"{source}: transformers cannot load it ({exc.__class__.__name__}: {_first_line(exc)})",
            hint="give a directory written by save_pretrained (config.json and the weights, "
            "as model.safetensors); pickled weights are loaded only as plain tensors "
            "(torch.load weights_only), never run",
        ) from exc
    names = [n for n in TEXT_INPUTS if n in inspect.signature(model.forward).parameters]
    if "input_ids" not in names:
        raise UsageError(
            f"{source}: {type(model).__name__} takes no input_ids; tdk import exports text models",
            hint="export it to ONNX yourself and import the .onnx file",
        )
    wrapper = _tuple_outputs(torch, model, names)
    with torch.no_grad():
        short, long = wrapper(*_sample(torch, names, 7)), wrapper(*_sample(torch, names, 9))
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "sequence"} for n in names}
    for output, a, b in zip(wrapper.keys, short, long, strict=True):
        varying = {i: "sequence" for i in range(1, a.dim()) if a.shape[i] != b.shape[i]}
        axes[output] = {0: "batch", **varying}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            _sample(torch, names, 8),
            str(path),
            input_names=names,
            output_names=list(wrapper.keys),
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,  # the TorchScript exporter: no onnxscript needed
        )


def _architecture(source: Path) -> str:
    """The model class ``config.json`` names (``""``: let AutoModel choose), read with the
    bounded reader first, so a deep or malformed file is a message, not a traceback."""
    path = source / "config.json"
    hint = "give the config.json save_pretrained wrote"
    config = load_json(path, hint)
    if not isinstance(config, dict):
        raise UsageError(f"{path}: not a JSON object", hint=hint)
    architectures = config.get("architectures") or [""]
    if not isinstance(architectures, list) or not all(isinstance(a, str) for a in architectures):
        raise UsageError(
            f"{path}: architectures must be a list of class names, not {architectures!r:.80}",
            hint=hint,
        )
    return str(architectures[0])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines() or [""])[0][:300]


def _sample(torch: Any, names: list[str], length: int) -> tuple[Any, ...]:
    ids = torch.ones((2, length), dtype=torch.long)
    values = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    values["token_type_ids"] = torch.zeros_like(ids)
    return tuple(values[n] for n in names)


def _tuple_outputs(torch: Any, model: Any, names: list[str]) -> Any:
    """``model`` as a module returning its tensor outputs as a tuple (``keys``: their names)."""

    class Outputs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model
            with torch.no_grad():
                first = model(**dict(zip(names, _sample(torch, names, 5), strict=True)))
            self.keys = tuple(k for k, v in first.items() if isinstance(v, torch.Tensor))

        def forward(self, *args: Any) -> tuple[Any, ...]:
            result = self.model(**dict(zip(names, args, strict=True)), return_dict=True)
            return tuple(result[k] for k in self.keys)

    return Outputs()


def write_pipeline(source: Path, imported: Imported, out: Path) -> list[Path]:
    """The tokenizer model and the ensemble (text -> the model's outputs) beside ``imported``."""
    model = imported.config
    if model.max_batch_size == 0:
        raise UsageError("--tokenizer: the exported model cannot batch", hint="drop --tokenizer")
    settings = _tokenizer_settings(source)
    tokenizer = out / f"{model.name}_tokenizer"
    tok_config = _tokenizer_config(tokenizer.name, model, settings)

    def fill_tokenizer(path: Path) -> None:
        (path / "1").mkdir(parents=True)
        shutil.copyfile(TOKENIZER_MODEL, path / "1" / "model.py")
        copy_input(source, "vocab.txt", path / "1" / "vocab.txt")
        (path / CONFIG_NAME).write_text(dump_config(tok_config), encoding="utf-8")

    stage_model(tokenizer, fill_tokenizer)
    pipeline = out / f"{model.name}_pipeline"
    ensemble = _ensemble_config(pipeline.name, tokenizer.name, model, tok_config)

    def fill_pipeline(path: Path) -> None:
        (path / "1").mkdir(parents=True)  # Triton loads an ensemble only with a version dir
        (path / CONFIG_NAME).write_text(dump_config(ensemble), encoding="utf-8")

    try:
        stage_model(pipeline, fill_pipeline, also=[imported.path, tokenizer])
    except BaseException:
        shutil.rmtree(tokenizer, ignore_errors=True)
        raise
    return [tokenizer, pipeline]


def _tokenizer_settings(source: Path) -> tuple[int, bool]:
    """(padded length, lower-case) from the model's and the tokenizer's configs."""
    hint = "give the directory `save_pretrained` wrote (config.json, tokenizer_config.json)"
    config = load_json(source / "config.json", hint)
    if not isinstance(config, dict):
        raise UsageError(f"{source / 'config.json'}: not a JSON object", hint=hint)
    length = min(MAX_LENGTH, int(config.get("max_position_embeddings", MAX_LENGTH)))
    lower = True
    settings = source / "tokenizer_config.json"
    if settings.is_file():
        found = load_json(settings, hint)
        lower = bool(found.get("do_lower_case", True)) if isinstance(found, dict) else True
    return length, lower


def _tokenizer_config(name: str, model: Any, settings: tuple[int, bool]) -> Any:
    from packager.config import datatype_value

    length, lower = settings
    config = new_config()
    config.name = name
    config.backend = "python"
    config.max_batch_size = model.max_batch_size
    config.input.add(name="text", data_type=datatype_value("BYTES"), dims=[1])
    for tensor in model.input:
        config.output.add(name=tensor.name, data_type=datatype_value("INT64"), dims=[length])
    config.parameters["max_length"].string_value = str(length)
    config.parameters["do_lower_case"].string_value = "true" if lower else "false"
    return config


def _ensemble_config(name: str, tokenizer: str, model: Any, tok_config: Any) -> Any:
    config = new_config()
    config.name = name
    config.platform = "ensemble"
    config.max_batch_size = model.max_batch_size
    config.input.add().CopyFrom(tok_config.input[0])
    for tensor in model.output:
        config.output.add().CopyFrom(tensor)
    first = config.ensemble_scheduling.step.add(model_name=tokenizer, model_version=-1)
    first.input_map["text"] = "text"
    second = config.ensemble_scheduling.step.add(model_name=model.name, model_version=-1)
    for tensor in model.input:
        first.output_map[tensor.name] = tensor.name
        second.input_map[tensor.name] = tensor.name
    for tensor in model.output:
        second.output_map[tensor.name] = tensor.name
    return config
