"""Build a release's objects: what changed since the published release, decided from inputs.

Each copy has a content key: the hash of everything its archive and repository files are made
of (input files' bytes and modes, renamed configs, tool version, compression level). A copy
whose key the previous manifest records, with its objects present, is not rebuilt, re-read or
re-hashed: its manifest entry is reused. Other copies are archived once; every source file is
hashed at most once per run (``FileDigests``), and each config is rendered once per member.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from packager import __version__
from packager.archive import ArchiveWriter, Entry, Taken
from packager.config import CONFIG_NAME, backend_of, datatype_name, dump_config
from packager.digests import FileDigests
from packager.inputs import SourceFile, outside_links, scan_model_dir
from packager.manifest import ARCHIVE_PREFIX, REPOSITORY_PREFIX, ManifestModel, TensorSpec
from packager.onnx_limits import model_longest
from packager.onnx_signature import model_input_ranges
from packager.rename import CopyLayout, Member
from packager.repository import ModelDir
from packager.requirements import requirements
from packager.stores import sha256_file
from packager.uploads import Upload
from packager.validate.engines import autocomplete as autocomplete_engine
from tdk.errors import UnsafeInputError

KEEP_NAME = ".keep"  # placeholder that keeps an empty directory in repository/
_EMPTY_SHA = hashlib.sha256(b"").hexdigest()
KEY_VERSION = 1  # bump when what an archive is made of changes meaning

Progress = Callable[[int], None]


class Phase(Protocol):
    """``phase(description, total, unit)`` starts a reported phase and returns its advance
    callback; ``unit`` is "bytes" for uploads."""

    def __call__(self, description: str, total: int, unit: str = "") -> Progress: ...


def quiet(description: str, total: int, unit: str = "") -> Progress:
    return lambda _: None


@dataclass
class Built:
    """What ``build_release`` decided: entries, every object, what it had to build."""

    entries: list[ManifestModel]
    uploads: list[Upload]
    warnings: list[str]
    rebuilt: list[str]  # target models archived in this run
    hashed_bytes: int  # input bytes read to hash (what the digest cache did not know)
    taken: dict[Path, Taken]  # snapshots of the inputs read to archive them


def _tensor_specs(
    tensors: object,
    ranges: Mapping[str, tuple[int, int]] | None = None,
    longest: Mapping[str, tuple[int, ...]] | None = None,
) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(
            t.name,
            datatype_name(t.data_type),
            tuple(int(d) for d in t.dims),
            bool(getattr(t, "optional", False)),
            (ranges or {}).get(t.name),
            (longest or {}).get(t.name),
        )
        for t in tensors  # type: ignore[attr-defined]
    )


class _Release:
    """The staged objects of one release and how to build its manifest entries."""

    def __init__(self, stage: Path, level: int, digests: FileDigests) -> None:
        self.stage = stage
        self.level = level
        self.digests = digests
        self.scans: dict[Path, tuple[list[str], list[SourceFile]]] = {}
        self.configs: dict[str, bytes] = {}
        self.uploads: dict[str, Upload] = {}
        self.warnings: list[str] = []

    def scan(self, model: ModelDir) -> tuple[list[str], list[SourceFile]]:
        if model.path not in self.scans:
            self.scans[model.path] = scan_model_dir(model.path, skip=(CONFIG_NAME,))
        return self.scans[model.path]

    def check_links(self, layouts: list[CopyLayout]) -> None:
        """Refuse a file hard-linked from outside the models being packaged (before any
        archive is written): what is written through that other name would be published."""
        for layout in layouts:
            for member in layout.members:
                self.scan(member.source)
        problems = outside_links([f for _, files in self.scans.values() for f in files])
        if problems:
            raise UnsafeInputError(
                f"{len(problems)} input file(s) cannot be packaged:\n  " + "\n  ".join(problems),
                hint="replace each with a copy of its own (cp --preserve=mode FILE tmp && "
                "mv tmp FILE), so that no name outside the repository shares it",
            )

    def config(self, member: Member) -> bytes:
        if member.name not in self.configs:
            self.configs[member.name] = dump_config(member.config).encode()
        return self.configs[member.name]

    def dirs_of(self, member: Member) -> list[str]:
        """The model's directories; an ensemble without one gets ``1`` (Triton needs a
        version directory to load any model)."""
        dirs = self.scan(member.source)[0]
        if member.source.is_ensemble and not any(d.isdigit() for d in dirs):
            return sorted([*dirs, "1"])
        return dirs

    def empty_dirs(self, member: Member) -> list[str]:
        """Directories of ``member`` with no file at or below them."""
        files = self.scan(member.source)[1]
        return [
            d for d in self.dirs_of(member) if not any(f.rel.startswith(d + "/") for f in files)
        ]

    def content_key(self, layout: CopyLayout) -> str:
        """The hash of everything the copy's objects are made of."""
        members = []
        for member in layout.members:
            files = self.scan(member.source)[1]
            members.append(
                [
                    member.name,
                    hashlib.sha256(self.config(member)).hexdigest(),
                    self.dirs_of(member),
                    [[f.rel, f.executable, self.digests.sha256(f.path)] for f in files],
                ]
            )
        described = [KEY_VERSION, __version__, self.level, layout.target_model, layout.name]
        described += [layout.source.name, layout.index, members]
        return hashlib.sha256(json.dumps(described).encode()).hexdigest()

    def entries(self, member: Member) -> list[Entry]:
        files = self.scan(member.source)[1]
        config = self.config(member)
        entries = [Entry(member.name), Entry(f"{member.name}/{CONFIG_NAME}", data=config)]
        entries += [Entry(f"{member.name}/{d}") for d in self.dirs_of(member)]
        entries += [Entry(f"{member.name}/{f.rel}", source=f) for f in files]
        return entries

    def add_repository(self, member: Member) -> dict[str, str]:
        """Stage ``repository/<name>/...`` of ``member``; returns relative path -> sha256."""
        files: dict[str, str] = {}
        config = self.config(member)
        key = f"{REPOSITORY_PREFIX}{member.name}/{CONFIG_NAME}"
        sha = hashlib.sha256(config).hexdigest()
        self.uploads[key] = Upload(key, sha, len(config), data=config)
        files[f"{member.name}/{CONFIG_NAME}"] = sha
        for source in self.scan(member.source)[1]:
            key = f"{REPOSITORY_PREFIX}{member.name}/{source.rel}"
            sha = self.digests.sha256(source.path)
            self.uploads[key] = Upload(key, sha, source.size, path=source.path, live=True)
            files[f"{member.name}/{source.rel}"] = sha
        for rel in self.empty_dirs(member):
            # Object stores hold no directories: a placeholder keeps the (version) directory,
            # which Triton ignores as a file but needs as a directory (ensembles).
            key = f"{REPOSITORY_PREFIX}{member.name}/{rel}/{KEEP_NAME}"
            self.uploads[key] = Upload(key, _EMPTY_SHA, 0, data=b"")
            files[f"{member.name}/{rel}/{KEEP_NAME}"] = _EMPTY_SHA
        return files

    def reuse(self, layout: CopyLayout, previous: ManifestModel) -> ManifestModel:
        """The unchanged copy: its objects are registered (so they stay expected), not built."""
        for member in layout.members:
            self.add_repository(member)
        self.uploads[previous.archive] = Upload(previous.archive, previous.sha256, previous.size)
        return previous

    def add_copy(
        self, layout: CopyLayout, writer: ArchiveWriter, hasher: ThreadPoolExecutor
    ) -> Callable[[], ManifestModel]:
        """Stage the copy's archive; returns a function giving its manifest entry once hashed."""
        entries = sorted(
            (e for member in layout.members for e in self.entries(member)), key=lambda e: e.arcname
        )
        path = self.stage / layout.target_model
        writer.write(entries, path)
        files: dict[str, str] = {}
        for member in layout.members:
            files.update(self.add_repository(member))
        key = self.content_key(layout)  # its files were hashed while archiving
        digest = hasher.submit(sha256_file, path)  # overlaps with writing the next archive
        return lambda: self._entry(layout, key, path, digest.result(), files)

    def repository_only(self, layout: CopyLayout, reason: str) -> ManifestModel:
        """A copy that cannot run on SageMaker MME: its repository/ files, no archive."""
        files: dict[str, str] = {}
        for member in layout.members:
            files.update(self.add_repository(member))
        self.warnings.append(f"{layout.name}: no mme/ archive ({reason})")
        return self._model(layout, "", "", 0, files, "", reason)

    def _entry(
        self, layout: CopyLayout, content_key: str, path: Path, sha: str, files: dict[str, str]
    ) -> ManifestModel:
        key, size = f"{ARCHIVE_PREFIX}{layout.target_model}", path.stat().st_size
        self.uploads[key] = Upload(key, sha, size, path=path, move=True)
        return self._model(layout, key, sha, size, files, content_key)

    def _model(
        self,
        layout: CopyLayout,
        key: str,
        sha: str,
        size: int,
        files: dict[str, str],
        content_key: str,
        left_out: str = "",
    ) -> ManifestModel:
        # the signature Triton serves: an engine backend completes its inputs/outputs at load
        config = autocomplete_engine(
            ModelDir(layout.served.source.path, layout.served.config)
        ).config
        return ManifestModel(
            target_model=layout.target_model,
            name=layout.name,
            source=layout.source.name,
            copy=layout.index,
            sha256=sha,
            size=size,
            archive=key,
            backend=backend_of(config),
            platform=str(config.platform),
            max_batch_size=int(config.max_batch_size),
            inputs=_tensor_specs(
                config.input,
                model_input_ranges(layout.served.source.path, config),
                model_longest(layout.served.source.path, config),
            ),
            outputs=_tensor_specs(config.output),
            contains=tuple(member.name for member in layout.members),
            files=files,
            content_key=content_key,
            mme_left_out=left_out,
        )


def mme_refusal(layout: CopyLayout) -> str | None:
    """Why ``layout`` cannot run on SageMaker MME (so no mme/ archive is built), None if it can."""
    decoupled = [m.name for m in layout.members if requirements(m.source).decoupled]
    if not decoupled:
        return None
    return (
        f"{', '.join(decoupled)} decoupled: Triton's SageMaker MME front refuses decoupled "
        "models; it is served from repository/ by the targets that serve decoupled models "
        "(`tdk validate --target sagemaker` names them)"
    )


def _candidate(
    previous: ManifestModel | None, present: set[str], sizes: Mapping[str, int] | None
) -> ManifestModel | None:
    """The previous entry of a copy if the store still holds all its objects (its archive at
    the size the manifest says: a damaged one, which ``repair.check_store`` gives the size
    ``DAMAGED``, is rebuilt)."""
    if previous is None or not previous.content_key or previous.archive not in present:
        return None
    if sizes is not None and sizes.get(previous.archive) != previous.size:
        return None
    if any(REPOSITORY_PREFIX + rel not in present for rel in previous.files):
        return None
    return replace(previous)


def build_release(
    layouts: list[CopyLayout],
    stage: Path,
    level: int,
    phase: Phase = quiet,
    previous: Iterable[ManifestModel] = (),
    present: set[str] | None = None,
    digests: FileDigests | None = None,
    sizes: Mapping[str, int] | None = None,
) -> Built:
    """Stage every archive and repository file of ``layouts`` under ``stage``, except those of
    copies unchanged since ``previous`` whose objects are ``present`` in the store."""
    release = _Release(stage, level, digests or FileDigests())
    release.check_links(layouts)
    before = {model.target_model: model for model in previous}
    entries: dict[str, Callable[[], ManifestModel]] = {}
    todo = []
    for layout in layouts:
        for member in layout.members:
            if member.source.completed == "tensorrt":
                release.warnings.append(
                    f"{member.name}: a TensorRT engine without config.pbtxt; Triton completes its "
                    "inputs and outputs from the engine at load, tdk cannot read them without "
                    "TensorRT: the manifest lists none (write config.pbtxt to record them)"
                )
        refusal = mme_refusal(layout)
        if refusal is not None:
            only = release.repository_only(layout, refusal)
            entries[layout.target_model] = lambda only=only: only  # type: ignore[misc]
            continue
        # Only a copy the store may already hold needs its key before building: the others'
        # input files are hashed from the bytes read to archive them (each read once).
        same = _candidate(before.get(layout.target_model), present or set(), sizes)
        if same is not None and same.content_key == release.content_key(layout):
            reused = release.reuse(layout, same)
            entries[layout.target_model] = lambda reused=reused: reused  # type: ignore[misc]
        else:
            todo.append(layout)
    advance = phase("packaging", len(todo))
    with (
        ArchiveWriter(level, on_digest=release.digests.record, tee=stage) as writer,
        ThreadPoolExecutor(max_workers=2) as hasher,
    ):
        for layout in todo:
            entries[layout.target_model] = release.add_copy(layout, writer, hasher)
            advance(1)
        models = [entries[layout.target_model]() for layout in layouts]
    return Built(
        models,
        sorted(release.uploads.values(), key=lambda u: u.key),
        release.warnings,
        [layout.target_model for layout in todo],
        release.digests.hashed_bytes,
        writer.taken,
    )
