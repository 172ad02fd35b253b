"""What the engine checks share: reading the engines' argument files, near-miss suggestions,
telling a Hugging Face id from a path, and where a model's engine files live."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from packager.repository import ModelDir
from packager.validate.findings import Sink
from tdk import bounded

#: an engine's argument file is a few KB, an engine's config.json too
ENGINE_FILE_MAX_BYTES = 4 * 1024 * 1024
#: ``org/name`` or ``name`` as the Hugging Face Hub spells a repository id
_HF_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")


class Unreadable(Exception):
    """An engine file that is missing or not the mapping the engine expects."""


def version_dir(model: ModelDir) -> Path:
    """The version directory the engine reads its files from (the newest; ``1`` when none)."""
    versions = model.versions()
    return model.path / (versions[-1] if versions else "1")


def read_mapping(path: Path, kind: str) -> dict[str, Any]:
    """``path`` parsed as a JSON object (``kind`` "JSON") or YAML mapping, read by the bounded
    reader (regular files only, size, depth and aliases capped); Unreadable says why."""
    if not path.exists():
        raise Unreadable(f"{path.name} is missing")
    load = bounded.load_json if kind == "JSON" else bounded.load_yaml
    try:
        data = load(path, hint="", limit=ENGINE_FILE_MAX_BYTES)
    except bounded.DocumentError as exc:
        raise Unreadable(f"{path.name}: {exc.reason}") from None
    if not isinstance(data, dict):
        raise Unreadable(f"{path.name} holds a {type(data).__name__}, not a {kind} object")
    return data


def suggestion(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` most likely misspells, None when nothing is close."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
    return close[0] if close else None


def is_hub_id(value: object, model: ModelDir) -> bool:
    """True when ``value`` names a Hugging Face repository rather than a path the engine sees:
    not absolute, not present in the model or version directory, shaped like ``org/name``."""
    if not isinstance(value, str) or not value or value.startswith(("/", ".", "~")):
        return False
    for base in (model.path, version_dir(model)):
        if (base / value).exists():
            return False
    return _HF_ID.fullmatch(value) is not None


def positive_int(value: object) -> int | None:
    """``value`` as an int >= 1 (JSON numbers or digit strings), None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and value >= 1 else None


PARALLEL_KEYS = ("tensor_parallel_size", "pipeline_parallel_size")


def report_parallel_sizes(sink: Sink, file: Path, engine: dict[str, Any]) -> None:
    """TDK605 for a tensor or pipeline parallel size that is not a whole number >= 1 (the
    vLLM engine arguments and TensorRT-LLM's ``LLM()`` arguments spell them alike)."""
    for key in PARALLEL_KEYS:
        if key in engine and positive_int(engine[key]) is None:
            sink.report("TDK605", f"{file.name} {key}",
                        f"{key} is {engine[key]!r}; it must be a whole number >= 1",
                        f"set {key} to the number of GPUs it splits the model over",
                        file=file)  # fmt: skip


def report_hub_id(sink: Sink, file: Path, key: str, value: str) -> None:
    sink.report(
        "TDK610",
        f"{file.name} {key}",
        f"{key} {value!r} is a Hugging Face id: the engine downloads the weights when the model "
        "loads, so they are not covered by the release manifest's sha256, a gated model needs "
        "an HF_TOKEN in the server's environment, and every cold start pays the download",
        "copy the weights into the model directory (or a mounted weight cache) and give that "
        "path, or deploy with the token and a persistent cache",
        file=file,
    )
