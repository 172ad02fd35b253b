"""Find the models in a Triton repository (or a single model directory) on disk."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME, autocomplete_backend, backend_of, load_config, new_config
from tdk.errors import ConfigError, UsageError, ValidationFailed


@dataclass
class ModelDir:
    """A model directory in source form and its parsed config."""

    path: Path
    config: Any  # inference.ModelConfig
    # "" when config.pbtxt holds the config; else the backend that completes it at load
    # (no config.pbtxt: "onnxruntime" from the graph, "tensorrt" from the engine)
    completed: str = ""

    @property
    def dir_name(self) -> str:
        return self.path.name

    @property
    def name(self) -> str:
        """Triton's model name: the config's ``name`` or, when unset, the directory name."""
        return str(self.config.name) or self.path.name

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_NAME

    @property
    def backend(self) -> str:
        return backend_of(self.config)

    @property
    def is_ensemble(self) -> bool:
        return self.config.platform == "ensemble"

    def versions(self) -> list[str]:
        """Numeric version directories, sorted numerically."""
        found = [p.name for p in self.path.iterdir() if p.is_dir() and p.name.isdigit()]
        return sorted(found, key=int)


def is_model_dir(path: Path) -> bool:
    return (path / CONFIG_NAME).is_file()


@dataclass(frozen=True)
class Unloadable:
    """A directory that is a model but cannot be read: no config, or a config that fails."""

    path: Path  # the model directory
    code: str  # the validate rule it breaks (TDK101 missing, TDK102 unparseable)
    message: str
    hint: str


@dataclass
class Discovery:
    """What one repository (or model directory) holds: parsed models and unloadable ones."""

    models: list[ModelDir] = field(default_factory=list)
    unloadable: list[Unloadable] = field(default_factory=list)


def discover_all(path: Path) -> Discovery:
    """The one discovery routine (validate, package and the local endpoint use it).

    ``path`` is a repository (its non-hidden child directories, and hidden ones that hold a
    config, are models) or a single model directory (it holds a config or numeric version
    directories). Raises UsageError when the path does not exist or holds no model.
    """
    _require_directory(path)
    if is_model_dir(path) or _looks_like_model(path):
        candidates = [path]
    else:
        candidates = sorted(
            p for p in path.iterdir() if p.is_dir() and (is_model_dir(p) or p.name[:1] != ".")
        )
    if not candidates:
        raise UsageError(
            f"{path}: empty repository, no model directory with a {CONFIG_NAME} found",
            hint=f"a Triton repository holds <model>/{CONFIG_NAME} and <model>/<version>/...",
        )
    found = Discovery()
    for candidate in candidates:
        _load_into(candidate, found)
    return found


def discover(path: Path) -> list[ModelDir]:
    """The models under ``path``; any unloadable model directory is a ValidationFailed, so
    ``tdk package`` refuses exactly what ``tdk validate`` reports."""
    found = discover_all(path)
    if found.unloadable:
        first = found.unloadable[0]
        more = f" (and {len(found.unloadable) - 1} more)" if len(found.unloadable) > 1 else ""
        raise ValidationFailed(
            f"{first.message}{more}; nothing was published",
            found.unloadable,
            hint=first.hint + " (run `tdk validate PATH` for the full list)",
        )
    return found.models


def _require_directory(path: Path) -> None:
    if not path.exists():
        raise UsageError(
            f"{path}: no such file or directory", hint="give a Triton repository or model directory"
        )
    if not path.is_dir():
        raise UsageError(
            f"{path}: not a directory", hint="give a Triton repository or model directory"
        )


def _looks_like_model(path: Path) -> bool:
    """A directory with numeric children is a model directory (perhaps missing its config)."""
    return any(p.is_dir() and p.name.isdigit() for p in path.iterdir())


def _load_into(path: Path, found: Discovery) -> None:
    if not is_model_dir(path):
        try:
            completed = completed_model(path)
        except ConfigError as exc:  # an ONNX file that is not one: Triton cannot complete it
            found.unloadable.append(Unloadable(path, "TDK501", exc.message, exc.hint))
            return
        if completed is not None:
            found.models.append(completed)
            return
        found.unloadable.append(
            Unloadable(
                path,
                "TDK101",
                f"{path} has no {CONFIG_NAME}; tdk cannot package it and Triton cannot load it",
                f"add {path / CONFIG_NAME} (name, backend, max_batch_size, input, output) "
                "or move the directory out of the repository",
            )
        )
        return
    try:
        found.models.append(ModelDir(path, load_config(path / CONFIG_NAME)))
    except ConfigError as exc:
        unfilled = template_placeholders(path / CONFIG_NAME)
        if unfilled:  # a template, not a typo: say which placeholders and what fills them
            found.unloadable.append(
                Unloadable(path, "TDK601", *placeholder_message(path / CONFIG_NAME, unfilled))
            )
        else:
            found.unloadable.append(Unloadable(path, "TDK102", exc.message, exc.hint))


def completed_model(path: Path) -> ModelDir | None:
    """A model directory without config.pbtxt as Triton loads it: an ONNX model with the config
    its ONNX Runtime backend completes from the graph (``packager.onnx_signature``), a TensorRT
    engine with the backend alone (the TensorRT backend reads the engine's bindings, which needs
    TensorRT); None when Triton cannot complete it either."""
    from packager.onnx_signature import completed_config, onnx_file, read_graph

    bare = autocomplete_backend(new_config(), path)
    if bare.backend == "tensorrt":
        return ModelDir(path, bare, completed="tensorrt")
    if bare.backend != "onnxruntime":
        return None
    versions = sorted((p.name for p in path.iterdir() if p.is_dir() and p.name.isdigit()), key=int)
    for version in reversed(versions):  # the latest version is the one served by default
        onnx = onnx_file(path, version)
        if onnx is not None:
            return ModelDir(path, completed_config(read_graph(onnx), path.name), "onnxruntime")
    return None


_PLACEHOLDER = re.compile(r"\$\{([^}\n]*)\}")


def template_placeholders(config_path: Path) -> list[str]:
    """The ``${name}`` placeholders left in a config (TensorRT-LLM's all_models templates), in
    order of first appearance."""
    try:
        text = config_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found = (m.group(1) for line in text.splitlines() for m in _PLACEHOLDER.finditer(_code(line)))
    return list(dict.fromkeys(found))


def _code(line: str) -> str:
    """``line`` without its ``#`` comment (a ``#`` inside a quoted string is kept)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote and line[i - 1] != "\\" else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:i]
    return line


def placeholder_message(config_path: Path, names: list[str]) -> tuple[str, str]:
    """(message, hint) for a config that still holds template placeholders."""
    shown = ", ".join("${" + n + "}" for n in names)
    return (
        f"{config_path} is a template with unfilled placeholders {shown}; Triton cannot load it",
        "fill them with TensorRT-LLM's tools/fill_template.py, e.g. `python3 tools/"
        f"fill_template.py -i config.pbtxt {names[0]}:<value>,...`",
    )
