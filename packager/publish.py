"""``tdk package``: validate, layout copies, build archives, publish them and write the manifest.

Everything that can fail on the input (destination, validation, unsafe files, names) is checked
before the first byte is published; the manifest is removed before objects change and written
last, so an interrupted publish leaves a release that is visibly incomplete and never served.
``--prune`` deletes only keys the ledger or the manifest says a tdk release wrote. All of it
happens under the destination's publish lock, so two publishes never interleave.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from packager import __version__
from packager.archive import DEFAULT_LEVEL
from packager.build import Built, Phase, Progress, build_release, quiet
from packager.destination import check_where
from packager.digests import FileDigests
from packager.manifest import (
    LEDGER_NAME,
    MANIFEST_NAME,
    REPOSITORY_PREFIX,
    Ledger,
    Manifest,
    ManifestModel,
)
from packager.rename import DEFAULT_TEMPLATE, CopyLayout, lay_out_copies
from packager.repair import StoreCheck, check_store, remember_written, update_record
from packager.repository import ModelDir, discover
from packager.stores import Store
from packager.stores.lock import DEFAULT_LOCK_TIMEOUT, PublishLock, publish_lock
from packager.uploads import StaleDigest, Upload, snapshot, snapshot_all
from tdk.errors import StoreError, TdkError, UsageError, ValidationFailed

# A release's manifest lists every copy (measured: 11.8 MB for 10,000 copies of the sample
# tokenizer) and every endpoint and `tdk invoke` reads it whole, and `tdk package` holds it in
# memory (~17 KB per copy measured): beyond this many copies both pass a few hundred MB. Split
# such a fleet into several releases.
MAX_RELEASE_COPIES = 20_000
CHECKS = 8  # existence checks in flight at once (stores that cannot list them in one go)
__all__ = ["MAX_RELEASE_COPIES", "Phase", "PublishResult", "Upload", "load_models", "publish"]


@dataclass
class PublishResult:
    manifest: Manifest
    url: str
    uploaded: list[str] = field(default_factory=list)  # objects whose bytes were sent
    copied: list[str] = field(default_factory=list)  # objects copied inside the store
    skipped: list[str] = field(default_factory=list)  # objects already there, unchanged
    uploaded_bytes: int = 0  # bytes sent (copies inside the store send none)
    copied_bytes: int = 0
    rebuilt: list[str] = field(default_factory=list)  # archives built in this run
    built_uploads: list[Upload] = field(default_factory=list)  # every object of the release
    hashed_bytes: int = 0  # input bytes read to hash them (the digest cache's misses)
    stale: list[str] = field(default_factory=list)
    manifest_written: bool = False
    warnings: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)


def load_models(repos: list[Path]) -> list[ModelDir]:
    """Discover the models of every repository given, refusing the same name twice with
    ``tdk validate``'s TDK105 finding (the same check, the same text)."""
    from packager.validate.layout import duplicate_names

    models: list[ModelDir] = []
    for repo in repos:
        models.extend(discover(repo))
    duplicates = duplicate_names(models)
    if duplicates:
        first = duplicates[0]
        more = f" (and {len(duplicates) - 1} more)" if len(duplicates) > 1 else ""
        raise ValidationFailed(
            f"{first.code} {first.message}{more}; nothing was published",
            duplicates,
            hint=first.fix + " (run `tdk validate PATH` for the full list)",
        )
    return models


def _upload(
    store: Store, uploads: list[Upload], progress: Progress, stage: Path
) -> tuple[list[str], list[str]]:
    """Upload each distinct content once, then copy it inside the store for its duplicates;
    returns the keys uploaded and the keys copied. An input file is uploaded from a snapshot
    of the bytes its manifest sha256 names, never read again from the live source."""
    first: dict[str, Upload] = {}
    for upload in uploads:
        first.setdefault(upload.sha256, upload)

    def put(upload: Upload) -> str:
        if upload.data is not None:
            store.put_bytes(upload.key, upload.data)
            progress(upload.size)
        else:
            assert upload.path is not None
            if upload.live:
                staged = snapshot(upload, stage)
                store.put_file(upload.key, staged, upload.sha256, progress, move=True)
                staged.unlink(missing_ok=True)
            else:
                store.put_file(upload.key, upload.path, upload.sha256, progress, move=upload.move)
        return upload.key

    def duplicate(upload: Upload) -> str:
        store.copy(first[upload.sha256].key, upload.key, upload.sha256)
        return upload.key

    originals = list(first.values())
    duplicates = [u for u in uploads if first[u.sha256] is not u]
    with ThreadPoolExecutor(max_workers=4) as pool:
        put_keys = list(pool.map(put, originals))
        copied = list(pool.map(duplicate, duplicates))
    return put_keys, copied


def _unchanged_manifest(current: Manifest | None, manifest: Manifest) -> bool:
    if current is None:
        return False
    return current.models == manifest.models and current.trt_built_for == manifest.trt_built_for


def read_release(store: Store) -> tuple[set[str], Manifest | None]:
    """The keys a tdk release wrote under ``store`` (its ledger plus its manifest) and its
    manifest, each read with one request.

    A ``manifest.json`` that is not a tdk manifest is someone else's file: refused, not replaced.
    """
    owned: set[str] = set()
    ledger = store.read_versioned(LEDGER_NAME)
    if ledger is not None:
        owned |= Ledger.from_json(ledger[0], store.describe(LEDGER_NAME)).keys
    found = store.read_versioned(MANIFEST_NAME)
    if found is None:
        return owned, None
    try:
        manifest = Manifest.from_json(found[0], store.describe(MANIFEST_NAME))
    except TdkError as exc:
        raise UsageError(
            f"refusing to publish to {store.url}: {exc.message}, and publishing would replace it",
            hint="publish into a directory or prefix of its own, or delete that file "
            "if it is yours and no longer needed",
        ) from exc
    return owned | manifest.keys(), manifest


def _check_count(models: list[ModelDir], copies: int) -> None:
    total = len(models) * copies
    if total > MAX_RELEASE_COPIES:
        raise UsageError(
            f"--copies {copies} of {len(models)} model(s) makes {total} model copies; one "
            f"release holds at most {MAX_RELEASE_COPIES} (every endpoint reads its manifest "
            "whole)",
            hint="split the models or copies into several releases (a --release URL each)",
        )


def _with_built_for(entry: ManifestModel, built_for: Mapping[str, str]) -> ManifestModel:
    """``entry`` recording what its source model's TensorRT engine was built for ("" if none)."""
    return replace(entry, built_for=built_for.get(entry.source, ""))


def publish(
    repos: list[Path],
    dest: Store,
    copies: int,
    template: str = DEFAULT_TEMPLATE,
    share_composing: bool = False,
    level: int = DEFAULT_LEVEL,
    prune: bool = False,
    phase: Phase = quiet,
    trt_built_for: str = "",
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    built_for: Mapping[str, str] | None = None,
) -> PublishResult:
    """Package ``repos`` into ``copies`` renamed copies each and publish them to ``dest``,
    holding the destination's publish lock from reading its ledger to writing its manifest."""
    from packager.validate.runner import require_valid

    check_where(dest, repos, prune)
    models = load_models(repos)
    _check_count(models, copies)
    require_valid(models)
    layouts = lay_out_copies(models, copies, template, share_composing)
    with dest.staging() as stage, publish_lock(dest, lock_timeout) as lock:
        owned, previous = read_release(dest)
        digests = FileDigests()
        check = check_store(dest, previous, digests, CHECKS)
        for attempt in range(2):  # again once when the digest cache was found wrong
            try:
                result = _build_and_publish(
                    _Target(dest, owned, previous, lock, stage, check, digests),
                    layouts,
                    level,
                    phase,
                    (trt_built_for, built_for or {}),
                    prune,
                )
                break
            except StaleDigest:
                digests.save()  # without the entry that disagreed
                if attempt:
                    raise
        written = result.uploaded + result.copied
        remember_written(dest, result.built_uploads, written, digests)
        if not lock.lost:  # else the lock's new holder records what it writes
            warning = update_record(dest, check, result.built_uploads, written)
            result.warnings.extend([warning] if warning else [])
        return result


def _build_and_publish(
    target: _Target,
    layouts: list[CopyLayout],
    level: int,
    phase: Phase,
    built_for: tuple[str, Mapping[str, str]],
    prune: bool,
) -> PublishResult:
    """Build the release in the stage and publish it (``built_for``: what the release's and
    each source model's TensorRT engines were built for); StaleDigest (nothing published) when
    an input's bytes are not the sha256 the digest cache gave."""
    dest, previous, check, stage = target.store, target.previous, target.check, target.stage
    try:
        before = previous.models if previous else ()
        built = build_release(
            layouts, stage, level, phase, before, target.present, target.digests, check.sizes
        )
    except OSError as exc:  # a model file unreadable, the staging disk full, ...
        raise TdkError(
            f"cannot package: {exc.strerror}: {exc.filename}",
            hint=f"check that the models are readable and that {stage.parent} has room",
        ) from exc
    target.digests.save()
    manifest = Manifest(
        models=tuple(_with_built_for(e, built_for[1]) for e in built.entries),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_version=__version__,
        trt_built_for=built_for[0],
    )
    result = PublishResult(
        manifest=manifest,
        url=dest.url,
        warnings=built.warnings + ([check.warning] if check.warning else []),
        rebuilt=built.rebuilt,
        hashed_bytes=built.hashed_bytes,
        built_uploads=built.uploads,
    )
    _publish_release(target, manifest, built, prune, phase, result)
    return result


def _known(previous: Manifest | None, present: set[str]) -> dict[str, str]:
    """sha256 of objects the previous manifest lists and the store still holds."""
    if previous is None:
        return {}
    known = {m.archive: m.sha256 for m in previous.models}
    known.update(
        {REPOSITORY_PREFIX + rel: sha for m in previous.models for rel, sha in m.files.items()}
    )
    return {key: sha for key, sha in known.items() if key in present}


@dataclass(frozen=True)
class _Target:
    """The destination as this publish found it, under its lock."""

    store: Store
    owned: set[str]
    previous: Manifest | None
    lock: PublishLock
    stage: Path
    check: StoreCheck  # stored size of every object present, the intact ones
    digests: FileDigests

    @cached_property
    def sizes(self) -> dict[str, int]:
        return self.check.sizes  # a damaged object is given the size DAMAGED: it is rebuilt

    @cached_property
    def present(self) -> set[str]:
        return set(self.check.sizes)

    @cached_property
    def known(self) -> dict[str, str]:
        intact = {key: seen.sha256 for key, seen in self.check.intact.items()}
        return intact | _known(self.previous, self.present)


def _publish_release(
    target: _Target,
    manifest: Manifest,
    built: Built,
    prune: bool,
    phase: Phase,
    result: PublishResult,
) -> None:
    dest, owned, uploads = target.store, target.owned, built.uploads
    expected = {u.key for u in uploads}
    result.cleaned = dest.clean_leftovers(owned | expected)
    todo = _changed(target, uploads, phase(f"comparing with {dest.url}", len(uploads)))
    # live inputs are copied (and their digests checked) before anything in the store changes
    todo = snapshot_all(todo, target.stage, target.digests, built.taken)
    pending_keys = {u.key for u in todo}
    result.skipped = [u.key for u in uploads if u.key not in pending_keys]
    result.stale = sorted(key for key in target.present if key in owned and key not in expected)
    if not todo and not (prune and result.stale) and _unchanged_manifest(target.previous, manifest):
        return
    originals = {u.sha256: u.size for u in todo}  # duplicates are copied inside the store
    callback = phase(f"uploading to {dest.url}", sum(originals.values()), "bytes")
    # Record the keys about to be written before any of them changes, then unpublish.
    target.lock.check()
    _write_ledger(dest, owned | expected)
    dest.delete(MANIFEST_NAME)  # the release is incomplete from here until the end
    try:
        result.uploaded, result.copied = _upload(dest, todo, callback, target.stage)
    except StoreError as exc:
        raise StoreError(
            f"publishing to {dest.url} failed; no manifest was written, so the release "
            f"is incomplete and will not be served: {exc.message}",
            hint=exc.hint,
        ) from exc
    sizes = {u.key: u.size for u in todo}
    result.uploaded_bytes = sum(sizes[key] for key in result.uploaded)
    result.copied_bytes = sum(sizes[key] for key in result.copied)
    target.lock.check()
    if prune:
        for key in result.stale:
            dest.delete(key)
    _write_ledger(dest, expected if prune else expected | set(result.stale))
    dest.put_bytes(MANIFEST_NAME, manifest.to_json().encode(), "application/json")
    result.manifest_written = True


def _changed(target: _Target, uploads: list[Upload], progress: Progress) -> list[Upload]:
    """The uploads whose object is absent or different: a stored size other than the
    upload's is a damaged object, replaced. The store's listing and the previous manifest
    answer most; the rest are asked about in bounded parallel."""
    todo: list[Upload] = []
    ask: list[Upload] = []
    for upload in uploads:
        stored = target.sizes.get(upload.key)
        if upload.path is None and upload.data is None:
            progress(1)  # an unchanged copy's archive: present, its size checked by the build
        elif stored is not None and stored != upload.size:
            todo.append(upload)  # corrupted or cut short in the store: repaired
            progress(1)
        elif target.known.get(upload.key) == upload.sha256:
            progress(1)
        elif upload.key not in target.present:
            todo.append(upload)
            progress(1)
        else:
            ask.append(upload)

    def differs(upload: Upload) -> bool:
        return target.store.sha256_of(upload.key) != upload.sha256

    with ThreadPoolExecutor(max_workers=CHECKS) as pool:
        for upload, changed in zip(ask, pool.map(differs, ask), strict=True):
            if changed:
                todo.append(upload)
            progress(1)
    return sorted(todo, key=lambda u: u.key)


def _write_ledger(dest: Store, keys: set[str]) -> None:
    dest.put_bytes(LEDGER_NAME, Ledger(frozenset(keys)).to_json().encode(), "application/json")
