"""``tdk validate``: what Triton enforces when it loads a model, checked before deploying.

Rules live in one module per area: ``validate_layout`` (directories, model files, names),
``validate_config`` and ``validate_batching`` (config semantics), ``validate_ensemble``
(steps and data flow), ``validate_onnx`` (the graph against the config).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from packager.config import CONFIG_NAME, load_config
from packager.repository import ModelDir, is_model_dir
from packager.validate.config_rules import check_config
from packager.validate.ensemble import check_ensembles
from packager.validate.findings import Finding, Severity, Sink, has_errors
from packager.validate.layout import check_layout
from packager.validate.onnx_graph import check_onnx
from tdk.errors import ConfigError, UsageError, ValidationFailed

__all__ = [
    "Finding",
    "Severity",
    "has_errors",
    "require_valid",
    "validate_models",
    "validate_paths",
]


def validate_paths(paths: Sequence[Path]) -> list[Finding]:
    """Findings for every model under ``paths`` (repositories or model directories).

    Unreadable configs and directories without ``config.pbtxt`` are findings, not exceptions;
    a path that does not exist or holds nothing is a UsageError.
    """
    if not paths:
        raise UsageError("no path given", hint="give a Triton repository or model directory")
    models: list[ModelDir] = []
    findings: list[Finding] = []
    seen: set[Path] = set()
    for path in paths:
        for model_path in _model_paths(path, findings):
            if model_path.resolve() in seen:
                continue
            seen.add(model_path.resolve())
            model = _load(model_path, findings)
            if model is not None:
                models.append(model)
    return findings + validate_models(models)


def validate_models(models: Sequence[ModelDir]) -> list[Finding]:
    """Findings for already-parsed models; ensembles are checked against the others given."""
    sinks = {m.path: Sink(m.name, m.config_path) for m in models}
    for model in models:
        sink = sinks[model.path]
        check_layout(model, sink)
        check_config(model, sink)
        check_onnx(model, sink)
    check_ensembles(models, sinks)
    _check_duplicates(models, sinks)
    return [finding for model in models for finding in sinks[model.path].found]


def require_valid(models: Sequence[ModelDir] | Sequence[Path]) -> None:
    """Raise ValidationFailed (with every finding) when any model has an error."""
    paths = [m for m in models if isinstance(m, Path)]
    dirs = [m for m in models if isinstance(m, ModelDir)]
    findings = (validate_paths(paths) if paths else []) + validate_models(dirs)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        shown = "\n".join(f"  {f}" for f in errors[:5])
        more = f"\n  ... and {len(errors) - 5} more" if len(errors) > 5 else ""
        raise ValidationFailed(
            f"{len(errors)} validation error(s); nothing was published:\n{shown}{more}",
            findings,
            hint="fix them (run `tdk validate PATH` for the full list)",
        )


def _model_paths(path: Path, findings: list[Finding]) -> list[Path]:
    """Model directories under ``path``; directories that lack a config become findings."""
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory", hint="check the path")
    if not path.is_dir():
        raise UsageError(
            f"{path}: not a directory", hint="give a Triton repository or model directory"
        )
    if is_model_dir(path):
        return [path]
    # Hidden directories (.git, .ipynb_checkpoints) are skipped unless they hold a config.
    children = sorted(
        p for p in path.iterdir() if p.is_dir() and (is_model_dir(p) or not p.name.startswith("."))
    )
    if _looks_like_model(path):
        children = [path]
    if not children:
        raise UsageError(
            f"{path}: empty repository, no model directory found",
            hint=f"a Triton repository holds <model>/{CONFIG_NAME} and <model>/<version>/...",
        )
    models = [child for child in children if is_model_dir(child)]
    for child in children:
        if not is_model_dir(child):
            findings.append(
                Finding(
                    file=str(child / CONFIG_NAME),
                    field="config.pbtxt",
                    message=f"{child} has no {CONFIG_NAME}; tdk cannot package it and "
                    "SageMaker's Triton container cannot load it",
                    fix=f"add {child / CONFIG_NAME} (name, backend, max_batch_size, input, "
                    "output) or move the directory out of the repository",
                    model=child.name,
                )
            )
    return models


def _looks_like_model(path: Path) -> bool:
    """A directory with numeric children is a model directory missing its config."""
    return any(p.is_dir() and p.name.isdigit() for p in path.iterdir())


def _load(path: Path, findings: list[Finding]) -> ModelDir | None:
    try:
        return ModelDir(path, load_config(path / CONFIG_NAME))
    except ConfigError as exc:
        findings.append(
            Finding(
                file=str(path / CONFIG_NAME),
                field="config.pbtxt",
                message=exc.message,
                fix=exc.hint,
                model=path.name,
            )
        )
        return None


def _check_duplicates(models: Iterable[ModelDir], sinks: dict[Path, Sink]) -> None:
    first: dict[str, ModelDir] = {}
    for model in models:
        other = first.setdefault(model.name, model)
        if other is not model:
            sinks[model.path].error(
                "name",
                f"model name {model.name!r} is also used by {other.path}; Triton refuses a "
                "name that appears in more than one repository",
                "rename one of them (directory and `name:`)",
            )
