"""``k8sModels``: the repositories a Kubernetes stack's release is packaged from, so that
``pulumi up`` fits the workload to the models exactly as ``tdk render k8s --models`` does (the
image flavour with their LLM engine, GPUs per pod checked, /dev/shm, the startup budget, KEDA's
engine triggers). One path: ``model_needs`` is what both read.

The paths must be absolute: the Pulumi program runs in ``infra/`` (a ``main`` that is a
directory becomes the program's working directory: pulumi/pulumi ``pkg/engine/project.go``
``getPwdMain``, checked 2026-11-26) and ``tdk render`` in the user's shell, so a relative path
would name two different directories.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from infra.config import ConfigReader, qualify
from infra.k8s.config import NodeHint, WorkloadConfig, any_nodes, serve_models
from tdk.errors import ConfigError

if TYPE_CHECKING:
    from packager.requirements import Requirements

MODELS_KEY = "k8sModels"


def model_needs(repos: Sequence[Path]) -> list[Requirements]:
    """The placement needs of every model in ``repos``, validated as ``tdk package`` validates
    them (ValidationFailed with the findings otherwise)."""
    from packager.publish import load_models
    from packager.requirements import requirements
    from packager.validate.runner import require_valid

    found = load_models(list(repos))
    require_valid(found)
    return [requirements(m) for m in found]


def stack_repositories(reader: ConfigReader) -> tuple[Path, ...]:
    """The ``k8sModels`` repositories (comma-separated; empty: none), each an absolute path to
    an existing directory."""
    raw = reader.optional_string(MODELS_KEY) or ""
    paths = tuple(Path(item.strip()).expanduser() for item in raw.split(",") if item.strip())
    for path in paths:
        if not path.is_absolute():
            raise ConfigError(
                f"{qualify(MODELS_KEY)} names {str(path)!r}, a relative path: the Pulumi "
                "program runs in infra/ and tdk in your shell, so it would name two directories",
                hint=f'`pulumi config set {qualify(MODELS_KEY)} "$(realpath {path})"`',
            )
        if not path.is_dir():
            raise ConfigError(
                f"{qualify(MODELS_KEY)} names {path}, which is not a directory (the model "
                "repository the release is packaged from)",
                hint=f"point {qualify(MODELS_KEY)} at the repository `tdk package` read, or "
                f'`pulumi config set {qualify(MODELS_KEY)} ""` to fit no models',
            )
    return paths


def fitted_workload(
    reader: ConfigReader, workload: WorkloadConfig, nodes: NodeHint = any_nodes
) -> WorkloadConfig:
    """``workload`` fitted to the ``k8sModels`` repositories' models (unchanged when unset)."""
    repos = stack_repositories(reader)
    return serve_models(workload, model_needs(repos), nodes) if repos else workload
