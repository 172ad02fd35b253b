"""``tdk package --stack``: ONNX models served as the TensorRT engine cached for the stack's GPU.

For each ONNX model of the repositories whose ONNX file has exactly one cached engine for the
target (``packager.tensorrt.engines``), a staged copy of the model directory holds the engine
instead of the ONNX file, and its config says ``platform: "tensorrt_plan"`` with the engine named
per compute capability: ``cc_model_filenames { key: "8.9" value: "model_cc8.9.plan" }``. Triton
looks a model file up by the GPU's ``<major>.<minor>`` in ``cc_model_filenames`` before
``default_model_filename`` (triton-inference-server backends' model loading, checked
2026-11-27), so a pod loads the engine of its own node's architecture, and a repository can
carry one engine per architecture. Models without a cached engine are packaged as they are.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from packager.config import CONFIG_NAME, dump_config, load_config
from packager.stores.base import Store, sha256_file
from packager.tensorrt.engines import ENGINE_FILE, EngineRecord, engines_for
from tdk.errors import UsageError

ONNX_FILE = "model.onnx"


@dataclass(frozen=True)
class EngineModel:
    """A model packaged with an engine: its name, what the engine was built for, its key."""

    name: str
    built_for: str
    entry: str


def engine_file(compute: str) -> str:
    """``model_cc8.9.plan``: the engine's file name for compute capability ``compute``."""
    return f"model_cc{compute}.plan"


def _onnx_versions(model: Path) -> list[Path]:
    return sorted(
        v for v in model.iterdir() if v.is_dir() and v.name.isdigit() and (v / ONNX_FILE).is_file()
    )


def _one_engine(
    store: Store, model: Path, targets: list[str], version: Path
) -> EngineRecord | None:
    """The engine cached for the first of ``targets`` that has one; several for it: refused."""
    sha = sha256_file(version / ONNX_FILE)
    found: list[EngineRecord] = []
    for target in targets:
        found = engines_for(store, sha, target)
        if found:
            break
    if len(found) > 1:
        builds = "; ".join(f"{r.key.precision}, {r.key.profile}" for r in found)
        raise UsageError(
            f"{model.name}: {len(found)} cached engines fit {found[0].key.target} ({builds})",
            hint=f"delete the ones not to serve under {store.describe(found[0].key.prefix)}",
        )
    return found[0] if found else None


def _convert(store: Store, model: Path, records: dict[Path, EngineRecord], compute: str) -> None:
    """Swap each version's ONNX file for its engine; the config for the engine's."""
    name = engine_file(compute)
    for version, record in records.items():
        (version / ONNX_FILE).unlink()
        store.download(record.key.prefix + ENGINE_FILE, version / name)
        if sha256_file(version / name) != record.plan_sha256:
            raise UsageError(
                f"{store.describe(record.key.prefix + ENGINE_FILE)} is not the engine its record "
                "names (sha256 differs)",
                hint="delete that cache entry and run tdk build again",
            )
    config = load_config(model / CONFIG_NAME)
    config.ClearField("backend")
    config.platform = "tensorrt_plan"
    config.default_model_filename = name
    config.cc_model_filenames[compute] = name
    config.optimization.ClearField("execution_accelerators")  # ONNX Runtime's accelerators
    (model / CONFIG_NAME).write_text(dump_config(config))


def with_engines(
    repos: list[Path], store: Store, targets: list[str], compute: str, work: Path
) -> tuple[list[Path], list[EngineModel]]:
    """Copies of ``repos`` under ``work`` where every ONNX model with a cached engine for one
    of ``targets`` (``EngineKey.target``, in preference order) is served by that engine, named
    for ``compute`` (the GPU's ``8.9``); the copies and the models so converted."""
    staged, converted = [], []
    for index, repo in enumerate(repos):
        copy = work / str(index) / repo.name  # a model directory keeps its name
        shutil.copytree(repo, copy, symlinks=True)
        staged.append(copy)
        models = [copy] if (copy / CONFIG_NAME).is_file() else sorted(copy.iterdir())
        for model in models:
            if not (model / CONFIG_NAME).is_file() or not model.is_dir():
                continue
            versions = _onnx_versions(model)
            records = {v: _one_engine(store, model, targets, v) for v in versions}
            if not versions or any(r is None for r in records.values()):
                continue
            found = {v: r for v, r in records.items() if r is not None}
            _convert(store, model, found, compute)
            first = next(iter(found.values()))
            converted.append(EngineModel(model.name, first.built_for, first.key.prefix))
    return staged, converted
