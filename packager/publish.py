"""``tdk package``: validate, plan copies, build archives, publish them and write the manifest.

Everything that can fail on the input (destination, validation, unsafe files, names) is checked
before the first byte is published; the manifest is removed before objects change and written
last, so an interrupted publish leaves a release that is visibly incomplete and never served.
``--prune`` deletes only keys the ledger or the manifest says a tdk release wrote.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from packager import __version__
from packager.archive import (
    DEFAULT_LEVEL,
    ArchiveWriter,
    Entry,
    SourceFile,
    hard_linked,
    scan_model_dir,
)
from packager.config import CONFIG_NAME, backend_of, datatype_name, dump_config
from packager.manifest import (
    ARCHIVE_PREFIX,
    LEDGER_NAME,
    MANIFEST_NAME,
    REPOSITORY_PREFIX,
    Ledger,
    Manifest,
    ManifestModel,
    TensorSpec,
)
from packager.rename import DEFAULT_TEMPLATE, CopyPlan, Member, plan_copies
from packager.repository import ModelDir, discover
from packager.stores import Store, sha256_file
from packager.stores.lock import DEFAULT_LOCK_TIMEOUT, PublishLock, publish_lock
from tdk.errors import StoreError, TdkError, UsageError

# A release's manifest lists every copy (measured: 11.8 MB for 10,000 copies of the sample
# tokenizer) and every endpoint and `tdk invoke` reads it whole, and `tdk package` holds it in
# memory (~17 KB per copy measured): beyond this many copies both pass a few hundred MB. Split
# such a fleet into several releases.
MAX_RELEASE_COPIES = 20_000
KEEP_NAME = ".keep"  # placeholder that keeps an empty directory in repository/
_EMPTY_SHA = hashlib.sha256(b"").hexdigest()

Progress = Callable[[int], None]


class Phase(Protocol):
    """``phase(description, total, unit)`` starts a reported phase and returns its advance
    callback; ``unit`` is "bytes" for uploads."""

    def __call__(self, description: str, total: int, unit: str = "") -> Progress: ...


def _quiet(description: str, total: int, unit: str = "") -> Progress:
    return lambda _: None


@dataclass(frozen=True)
class Upload:
    """One object of the release: a staged file or in-memory bytes, and its sha256."""

    key: str
    sha256: str
    size: int
    path: Path | None = None
    data: bytes | None = None
    move: bool = False


@dataclass
class PublishResult:
    manifest: Manifest
    url: str
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    uploaded_bytes: int = 0
    stale: list[str] = field(default_factory=list)
    manifest_written: bool = False
    warnings: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)


def load_models(repos: list[Path]) -> list[ModelDir]:
    """Discover the models of every repository given, refusing the same name twice."""
    models: list[ModelDir] = []
    for repo in repos:
        models.extend(discover(repo))
    seen: dict[str, ModelDir] = {}
    for model in models:
        other = seen.setdefault(model.name, model)
        if other is not model:
            raise TdkError(
                f"model name {model.name!r} is defined twice: {other.config_path} and "
                f"{model.config_path}",
                hint="rename one of them (directory and `name:`)",
            )
    return models


def _tensor_specs(tensors: object) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(
            t.name,
            datatype_name(t.data_type),
            tuple(int(d) for d in t.dims),
            bool(getattr(t, "optional", False)),
        )
        for t in tensors  # type: ignore[attr-defined]
    )


class _Release:
    """The staged objects of one release and how to build its manifest entries."""

    def __init__(self, stage: Path) -> None:
        self.stage = stage
        self.scans: dict[Path, tuple[list[str], list[SourceFile]]] = {}
        self.source_sha: dict[Path, str] = {}
        self.uploads: dict[str, Upload] = {}

        self.warnings: list[str] = []

    def scan(self, model: ModelDir) -> tuple[list[str], list[SourceFile]]:
        if model.path not in self.scans:
            self.scans[model.path] = scan_model_dir(model.path, skip=(CONFIG_NAME,))
            self.warnings += hard_linked(self.scans[model.path][1])
        return self.scans[model.path]

    def sha_of(self, source: SourceFile) -> str:
        if source.path not in self.source_sha:
            self.source_sha[source.path] = sha256_file(source.path)
        return self.source_sha[source.path]

    def dirs_of(self, member: Member) -> list[str]:
        """The model's directories; an ensemble without one gets ``1`` (Triton needs a
        version directory to load any model)."""
        dirs = self.scan(member.source)[0]
        if member.source.is_ensemble and not any(d.isdigit() for d in dirs):
            return sorted([*dirs, "1"])
        return dirs

    def entries(self, member: Member) -> list[Entry]:
        files = self.scan(member.source)[1]
        config = dump_config(member.config).encode()
        entries = [Entry(member.name), Entry(f"{member.name}/{CONFIG_NAME}", data=config)]
        entries += [Entry(f"{member.name}/{d}") for d in self.dirs_of(member)]
        entries += [Entry(f"{member.name}/{f.rel}", source=f) for f in files]
        return entries

    def add_repository(self, member: Member) -> dict[str, str]:
        """Stage ``repository/<name>/...`` of ``member``; returns relative path -> sha256."""
        files: dict[str, str] = {}
        config = dump_config(member.config).encode()
        key = f"{REPOSITORY_PREFIX}{member.name}/{CONFIG_NAME}"
        sha = hashlib.sha256(config).hexdigest()
        self.uploads[key] = Upload(key, sha, len(config), data=config)
        files[f"{member.name}/{CONFIG_NAME}"] = sha
        for source in self.scan(member.source)[1]:
            key = f"{REPOSITORY_PREFIX}{member.name}/{source.rel}"
            sha = self.sha_of(source)
            self.uploads[key] = Upload(key, sha, source.size, path=source.path)
            files[f"{member.name}/{source.rel}"] = sha
        for rel in self.empty_dirs(member):
            # Object stores hold no directories: a placeholder keeps the (version) directory,
            # which Triton ignores as a file but needs as a directory (ensembles).
            key = f"{REPOSITORY_PREFIX}{member.name}/{rel}/{KEEP_NAME}"
            self.uploads[key] = Upload(key, _EMPTY_SHA, 0, data=b"")
            files[f"{member.name}/{rel}/{KEEP_NAME}"] = _EMPTY_SHA
        return files

    def empty_dirs(self, member: Member) -> list[str]:
        """Directories of ``member`` with no file at or below them."""
        files = self.scan(member.source)[1]
        return [
            d for d in self.dirs_of(member) if not any(f.rel.startswith(d + "/") for f in files)
        ]

    def add_copy(
        self, plan: CopyPlan, writer: ArchiveWriter, hasher: ThreadPoolExecutor
    ) -> Callable[[], ManifestModel]:
        """Stage the copy's archive; returns a function giving its manifest entry once hashed."""
        entries = sorted(
            (e for member in plan.members for e in self.entries(member)), key=lambda e: e.arcname
        )
        path = self.stage / plan.target_model
        writer.write(entries, path)
        files: dict[str, str] = {}
        for member in plan.members:
            files.update(self.add_repository(member))
        digest = hasher.submit(sha256_file, path)  # overlaps with writing the next archive
        return lambda: self._entry(plan, path, digest.result(), files)

    def _entry(self, plan: CopyPlan, path: Path, sha: str, files: dict[str, str]) -> ManifestModel:
        key, size = f"{ARCHIVE_PREFIX}{plan.target_model}", path.stat().st_size
        self.uploads[key] = Upload(key, sha, size, path=path, move=True)
        config = plan.served.config
        return ManifestModel(
            target_model=plan.target_model,
            name=plan.name,
            source=plan.source.name,
            copy=plan.index,
            sha256=sha,
            size=size,
            archive=key,
            backend=backend_of(config),
            platform=str(config.platform),
            max_batch_size=int(config.max_batch_size),
            inputs=_tensor_specs(config.input),
            outputs=_tensor_specs(config.output),
            contains=tuple(member.name for member in plan.members),
            files=files,
        )


def build_release(
    plans: list[CopyPlan],
    stage: Path,
    level: int = DEFAULT_LEVEL,
    phase: Phase = _quiet,
) -> tuple[list[ManifestModel], list[Upload], list[str]]:
    """Stage every archive and repository file of ``plans`` under ``stage``; also returns
    warnings about the input (hard-linked files)."""
    release = _Release(stage)
    advance = phase("packaging", len(plans))
    with ArchiveWriter(level=level) as writer, ThreadPoolExecutor(max_workers=2) as hasher:
        pending = []
        for plan in plans:
            pending.append(release.add_copy(plan, writer, hasher))
            advance(1)
        entries = [finish() for finish in pending]
    return entries, sorted(release.uploads.values(), key=lambda u: u.key), release.warnings


def _upload(store: Store, uploads: list[Upload], progress: Progress) -> list[str]:
    """Upload each distinct content once, then copy it inside the store for its duplicates."""
    first: dict[str, Upload] = {}
    for upload in uploads:
        first.setdefault(upload.sha256, upload)

    def put(upload: Upload) -> str:
        if upload.data is not None:
            store.put_bytes(upload.key, upload.data)
            progress(upload.size)
        else:
            assert upload.path is not None
            store.put_file(upload.key, upload.path, upload.sha256, progress, move=upload.move)
        return upload.key

    def duplicate(upload: Upload) -> str:
        store.copy(first[upload.sha256].key, upload.key, upload.sha256)
        progress(upload.size)
        return upload.key

    originals = list(first.values())
    duplicates = [u for u in uploads if first[u.sha256] is not u]
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(put, originals))
        done += list(pool.map(duplicate, duplicates))
    return done


def _unchanged_manifest(store: Store, manifest: Manifest) -> bool:
    try:
        current = Manifest.from_json(store.get_bytes(MANIFEST_NAME))
    except TdkError:
        return False
    return current.models == manifest.models and current.trt_built_for == manifest.trt_built_for


def check_destination(dest: Store, prune: bool) -> None:
    """Refuse a release root where publishing (or pruning) would hit what is not ours."""
    problem = dest.unsafe_root(prune)
    if problem:
        raise UsageError(
            f"refusing to publish to {dest.url}: {problem}",
            hint="publish into a directory or prefix of its own, e.g. "
            f"{dest.url.rstrip('/')}/releases/r1 (is a shell variable in --dest unset?)",
        )


def check_overlap(dest: Store, repos: list[Path]) -> None:
    """Refuse a destination inside an input, or an input inside the destination (real paths,
    symlinks resolved): the release would be packaged into itself or into the repository."""
    root = dest.local_root
    if root is None:
        return
    real_root = root.resolve()
    for repo in repos:
        real_repo = repo.resolve()
        if real_root.is_relative_to(real_repo) or real_repo.is_relative_to(real_root):
            where = (
                f"it is inside the input {repo}"
                if real_root.is_relative_to(real_repo)
                else f"the input {repo} is inside it"
            )
            raise UsageError(
                f"refusing to publish to {dest.url}: {where} (real path {real_repo}); the "
                "release would be packaged into itself or into the repository",
                hint="publish to a directory outside every input, e.g. a sibling "
                f"{real_repo.parent / (real_repo.name + '-release')}",
            )


def owned_keys(store: Store) -> set[str]:
    """Keys a tdk release wrote under ``store``: its ledger plus its manifest (if any).

    A ``manifest.json`` that is not a tdk manifest is someone else's file: refused, not replaced.
    """
    owned: set[str] = set()
    if store.sha256_of(LEDGER_NAME) is not None:
        ledger = store.get_bytes(LEDGER_NAME)
        owned |= Ledger.from_json(ledger, store.describe(LEDGER_NAME)).keys
    if store.sha256_of(MANIFEST_NAME) is not None:
        where = store.describe(MANIFEST_NAME)
        try:
            manifest = Manifest.from_json(store.get_bytes(MANIFEST_NAME), where)
        except StoreError:
            raise
        except TdkError as exc:
            raise UsageError(
                f"refusing to publish to {store.url}: {exc.message}, and publishing would "
                "replace it",
                hint="publish into a directory or prefix of its own, or delete that file "
                "if it is yours and no longer needed",
            ) from exc
        owned |= manifest.keys()
    return owned


def _check_count(models: list[ModelDir], copies: int) -> None:
    total = len(models) * copies
    if total > MAX_RELEASE_COPIES:
        raise UsageError(
            f"--copies {copies} of {len(models)} model(s) makes {total} model copies; one "
            f"release holds at most {MAX_RELEASE_COPIES} (every endpoint reads its manifest "
            "whole)",
            hint="split the models or copies into several releases (--dest per release)",
        )


def publish(
    repos: list[Path],
    dest: Store,
    copies: int,
    template: str = DEFAULT_TEMPLATE,
    share_composing: bool = False,
    level: int = DEFAULT_LEVEL,
    prune: bool = False,
    phase: Phase = _quiet,
    trt_built_for: str = "",
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> PublishResult:
    """Package ``repos`` into ``copies`` renamed copies each and publish them to ``dest``,
    holding the destination's publish lock from reading its ledger to writing its manifest."""
    from packager.validate.runner import require_valid

    check_destination(dest, prune)
    check_overlap(dest, repos)
    models = load_models(repos)
    _check_count(models, copies)
    require_valid(models)
    plans = plan_copies(models, copies, template, share_composing)
    with dest.staging() as stage, publish_lock(dest, lock_timeout) as lock:
        owned = owned_keys(dest)
        try:
            entries, uploads, warnings = build_release(plans, stage, level, phase)
        except OSError as exc:  # a model file unreadable, the staging disk full, ...
            raise TdkError(
                f"cannot package: {exc.strerror}: {exc.filename}",
                hint=f"check that the models are readable and that {stage.parent} has room",
            ) from exc
        manifest = Manifest(
            models=tuple(entries),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            tool_version=__version__,
            trt_built_for=trt_built_for,
        )
        result = PublishResult(manifest=manifest, url=dest.url, warnings=warnings)
        _publish_release(dest, manifest, uploads, owned, prune, phase, result, lock)
        return result


def _publish_release(
    dest: Store,
    manifest: Manifest,
    uploads: list[Upload],
    owned: set[str],
    prune: bool,
    phase: Phase,
    result: PublishResult,
    lock: PublishLock,
) -> None:
    expected = {u.key for u in uploads}
    result.cleaned = dest.clean_leftovers(owned | expected)
    todo = _changed(dest, uploads, phase(f"comparing with {dest.url}", len(uploads)))
    pending_keys = {u.key for u in todo}
    result.skipped = [u.key for u in uploads if u.key not in pending_keys]
    existing = dest.list_keys(ARCHIVE_PREFIX) + dest.list_keys(REPOSITORY_PREFIX)
    result.stale = [key for key in existing if key in owned and key not in expected]
    if not todo and not (prune and result.stale) and _unchanged_manifest(dest, manifest):
        return
    total = sum(u.size for u in todo)
    callback = phase(f"uploading to {dest.url}", total, "bytes")
    # Record the keys about to be written before any of them changes, then unpublish.
    lock.check()
    _write_ledger(dest, owned | expected)
    dest.delete(MANIFEST_NAME)  # the release is incomplete from here until the end
    try:
        result.uploaded = _upload(dest, todo, callback)
    except StoreError as exc:
        raise StoreError(
            f"publishing to {dest.url} failed; no manifest was written, so the release "
            f"is incomplete and will not be served: {exc.message}",
            hint=exc.hint,
        ) from exc
    result.uploaded_bytes = total
    lock.check()
    if prune:
        for key in result.stale:
            dest.delete(key)
    _write_ledger(dest, expected if prune else expected | set(result.stale))
    dest.put_bytes(MANIFEST_NAME, manifest.to_json().encode(), "application/json")
    result.manifest_written = True


def _changed(dest: Store, uploads: list[Upload], progress: Progress) -> list[Upload]:
    """The uploads whose object is absent or different (one metadata request each)."""
    todo = []
    for upload in uploads:
        if dest.sha256_of(upload.key) != upload.sha256:
            todo.append(upload)
        progress(1)
    return todo


def _write_ledger(dest: Store, keys: set[str]) -> None:
    dest.put_bytes(LEDGER_NAME, Ledger(frozenset(keys)).to_json().encode(), "application/json")
