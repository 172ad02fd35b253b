"""Find the models in a Triton repository (or a single model directory) on disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME, backend_of, load_config
from tdk.errors import UsageError


@dataclass
class ModelDir:
    """A model directory in source form and its parsed config."""

    path: Path
    config: Any  # inference.ModelConfig

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


def discover(path: Path) -> list[ModelDir]:
    """The models under ``path``: a repository (children with config.pbtxt) or one model dir.

    Raises UsageError when the path does not exist or holds no model.
    """
    if not path.exists():
        raise UsageError(
            f"{path}: no such file or directory", hint="give a Triton repository or model directory"
        )
    if not path.is_dir():
        raise UsageError(
            f"{path}: not a directory", hint="give a Triton repository or model directory"
        )
    if is_model_dir(path):
        return [ModelDir(path, load_config(path / CONFIG_NAME))]
    children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    models = [ModelDir(p, load_config(p / CONFIG_NAME)) for p in children if is_model_dir(p)]
    if not models:
        raise UsageError(
            f"{path}: empty repository, no model directory with a {CONFIG_NAME} found",
            hint="a Triton repository holds <model>/config.pbtxt and <model>/<version>/...",
        )
    return models
