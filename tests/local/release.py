"""Build a small release (archives + manifest.json) the way `tdk package` lays it out."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any

from packager.config import CONFIG_NAME, backend_of, datatype_name, dump_config, load_config
from packager.manifest import Manifest, ManifestModel, TensorSpec


def _specs(tensors: Any) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(t.name, datatype_name(t.data_type), tuple(int(d) for d in t.dims))
        for t in tensors
    )


def _add_dir(tar: tarfile.TarFile, source: Path, name: str, config: Any) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    tar.addfile(info)
    for path in sorted(source.rglob("*")):
        arcname = f"{name}/{path.relative_to(source).as_posix()}"
        if path.is_dir():
            info = tarfile.TarInfo(arcname)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
            continue
        data = dump_config(config).encode() if path.name == CONFIG_NAME and path.parent == source else path.read_bytes()
        info = tarfile.TarInfo(arcname)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))


def make_release(repo: Path, dest: Path, copies: int, only: tuple[str, ...] = ()) -> Manifest:
    """``copies`` renamed copies of every model in ``repo`` (or those in ``only``)."""
    entries = []
    (dest / "mme").mkdir(parents=True, exist_ok=True)
    for model_dir in sorted(p for p in repo.iterdir() if (p / CONFIG_NAME).is_file()):
        if only and model_dir.name not in only:
            continue
        for index in range(copies):
            config = load_config(model_dir / CONFIG_NAME)
            name = f"{model_dir.name}-{index}"
            config.name = name
            members: list[tuple[Path, str, Any]] = []
            for step in config.ensemble_scheduling.step:
                composing = load_config(repo / step.model_name / CONFIG_NAME)
                new = f"{name}.{step.model_name}"
                composing.name = new
                members.append((repo / step.model_name, new, composing))
                step.model_name = new
            members.append((model_dir, name, config))
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
                for source, member, member_config in members:
                    _add_dir(tar, source, member, member_config)
            data = buffer.getvalue()
            (dest / "mme" / f"{name}.tar.gz").write_bytes(data)
            entries.append(
                ManifestModel(
                    target_model=f"{name}.tar.gz",
                    name=name,
                    source=model_dir.name,
                    copy=index,
                    sha256=hashlib.sha256(data).hexdigest(),
                    size=len(data),
                    archive=f"mme/{name}.tar.gz",
                    backend=backend_of(config),
                    platform=config.platform,
                    max_batch_size=config.max_batch_size,
                    inputs=_specs(config.input),
                    outputs=_specs(config.output),
                    contains=tuple(m[1] for m in members) if len(members) > 1 else (),
                )
            )
    manifest = Manifest(models=tuple(entries), created_at="2026-01-01T00:00:00+00:00", tool_version="test")
    (dest / "manifest.json").write_text(manifest.to_json())
    return manifest
