"""``tdk validate``: what Triton enforces when it loads a model, checked before deploying.

Rules live in one module per area: ``validate_layout`` (directories, model files, names),
``validate_config`` and ``validate_batching`` (config semantics), ``validate_ensemble``
(steps and data flow), ``validate_onnx`` (the graph against the config), ``engines`` (the LLM
engines' own files: vLLM ``model.json``, TensorRT-LLM ``model.yaml`` and engine ``config.json``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from packager.config import CONFIG_NAME, autocomplete_backend
from packager.repository import ModelDir, Unloadable, discover_all
from packager.validate.config_rules import check_config
from packager.validate.engines import autocomplete as autocomplete_engine
from packager.validate.engines import check_engine, check_engine_image
from packager.validate.engines.args import VllmImage
from packager.validate.ensemble import check_ensembles
from packager.validate.findings import Finding, Severity, Sink, finding, has_errors
from packager.validate.layout import check_completed, check_layout, duplicate_names
from packager.validate.locate import Locations
from packager.validate.onnx_graph import check_onnx
from tdk.errors import UnsafeInputError, UsageError, ValidationFailed

__all__ = [
    "Finding",
    "Severity",
    "has_errors",
    "image_findings",
    "require_valid",
    "validate_models",
    "validate_paths",
]


def validate_paths(
    paths: Sequence[Path], vllm_image: VllmImage | None = None, image_rules: bool = True
) -> list[Finding]:
    """Findings for every model under ``paths`` (repositories or model directories).

    Directories without ``config.pbtxt`` and unreadable configs are findings, not exceptions;
    a path that does not exist or holds nothing is a UsageError. Without ``image_rules`` the
    rules that read a target image's engine versions are left out (``image_findings``: a
    target's feasibility runs them).
    """
    if not paths:
        raise UsageError("no path given", hint="give a Triton repository or model directory")
    models: list[ModelDir] = []
    findings: list[Finding] = []
    seen: set[Path] = set()
    for path in paths:
        found = discover_all(path)
        for model in found.models:
            if model.path.resolve() not in seen:
                seen.add(model.path.resolve())
                models.append(model)
        findings.extend(_unloadable_finding(u) for u in found.unloadable)
    return findings + validate_models(models, vllm_image, image_rules)


def validate_models(
    models: Sequence[ModelDir], vllm_image: VllmImage | None = None, image_rules: bool = True
) -> list[Finding]:
    """Findings for already-parsed models; ensembles are checked against the others given.

    Rules see each config as Triton does: with backend, platform and model file name filled in
    from the model's files first (a config without `backend` is valid when Triton infers it).
    """
    models = _completed(models)
    sinks = {m.path: Sink(m.name, m.config_path) for m in models}
    for model in models:
        sink = sinks[model.path]
        check_layout(model, sink)
        if model.completed:
            check_completed(model, sink)
        if model.completed != "tensorrt":  # an engine's inputs and outputs are unknown here
            check_config(model, sink)
        check_onnx(model, sink)
        check_engine(model, sink, vllm_image, image_rules)
    check_ensembles(models, sinks)
    for duplicate in duplicate_names(models):
        sinks[Path(duplicate.file).parent].found.append(duplicate)
    findings = [found for model in models for found in sinks[model.path].found]
    return _locate(findings, models)


def image_findings(models: Sequence[ModelDir], image: VllmImage | None) -> list[Finding]:
    """The engine rules that read the target image's vLLM / TensorRT-LLM versions, for the
    one feasibility path (``infra.targets.feasibility``)."""
    models = _completed(models)
    sinks = {m.path: Sink(m.name, m.config_path) for m in models}
    for model in models:
        check_engine_image(model, sinks[model.path], image)
    return _locate([found for model in models for found in sinks[model.path].found], models)


def _completed(models: Sequence[ModelDir]) -> list[ModelDir]:
    """Each model as Triton sees it: backend, platform and model file filled in from its files,
    then what an LLM backend completes."""
    models = [replace(m, config=autocomplete_backend(m.config, m.path)) for m in models]
    return [autocomplete_engine(m) for m in models]


def require_valid(models: Sequence[ModelDir] | Sequence[Path]) -> None:
    """Raise ValidationFailed (with every finding) when any model has an error."""
    paths = [m for m in models if isinstance(m, Path)]
    dirs = [m for m in models if isinstance(m, ModelDir)]
    findings = (validate_paths(paths) if paths else []) + validate_models(dirs)
    errors = [f for f in findings if f.severity == "error"]
    unsafe = [f for f in errors if f.code == "TDK114"]
    if unsafe:  # links and special files keep their own error class, same text as validate
        raise UnsafeInputError(unsafe[0].message, hint=unsafe[0].fix)
    if errors:
        shown = "\n".join(f"  {f}" for f in errors[:5])
        more = f"\n  ... and {len(errors) - 5} more" if len(errors) > 5 else ""
        raise ValidationFailed(
            f"{len(errors)} validation error(s); nothing was published:\n{shown}{more}",
            findings,
            hint="fix them (run `tdk validate PATH` for the full list)",
        )


def _unloadable_finding(unloadable: Unloadable) -> Finding:
    line, col = _error_position(unloadable.message)
    return finding(
        unloadable.code,
        file=unloadable.path / CONFIG_NAME,
        field="config.pbtxt",
        message=unloadable.message,
        fix=unloadable.hint,
        model=unloadable.path.name,
        line=line,
        col=col,
    )


def _error_position(message: str) -> tuple[int, int]:
    """Where text_format's ParseError points (``...: 3:5 : ...``); 1:1 when it names nothing."""
    match = re.search(r"(\d+):(\d+) : ", message)
    return (int(match.group(1)), int(match.group(2))) if match else (1, 1)


def _locate(findings: list[Finding], models: Sequence[ModelDir]) -> list[Finding]:
    """Give every finding that points at a config.pbtxt the line and column of its field."""
    texts = {str(m.config_path): m.config_path for m in models}
    located: dict[str, Locations] = {}
    result = []
    for found in findings:
        path = texts.get(found.file)
        if path is not None and not found.line:
            if found.file not in located:
                located[found.file] = Locations(_read(path))
            found = found.at(*located[found.file].find(found.field))
        result.append(found)
    return result


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
