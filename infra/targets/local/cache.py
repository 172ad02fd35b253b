"""Fetch a TargetModel's archive, verify its sha256 against the manifest, extract it safely
(a copy without an archive is fetched file by file from ``repository/``: ``repo_files``).

Extraction accepts only regular files and directories under the model directories the
manifest names: no links, devices, absolute paths or ``..``. A corrupted archive is deleted,
never cached.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from infra.targets.local import workdir
from infra.targets.local.repo_files import fetch_files
from infra.triton_runtime.adapter import adapt_model_dir
from infra.triton_runtime.private import private_dir
from packager.manifest import ManifestModel
from packager.stores import Store
from packager.stores.capped import fetch_capped
from tdk.errors import TdkError, UnsafeInputError
from tdk.text import as_text

COPY_CHUNK = 1024 * 1024
#: the most members one model's archive may hold. A model directory holds its config.pbtxt, a
#: version directory and a few files; an ONNX model with external data one file per tensor
#: (hundreds for a large LLM). 200,000 empty files took 37 s to extract (issue 47 item 7):
#: counted as they are read, an archive is refused at the first member past this bound (10,000
#: empty files extract in 1.0 s, median of 3 on the 2-core dev machine, 2026-12-07), with
#: at most this many (empty) files written to its staging directory, which is removed
MAX_MEMBERS = 10_000
CACHE_HINT = "raise `tdk local up --cache-gb`, or lower --max-loaded-models"


class ArchiveRejected(TdkError):
    """The archive does not match the manifest or holds something unsafe."""


@dataclass(frozen=True)
class Extracted:
    """Model directories an archive put into the repository, and what it cost."""

    dirs: tuple[str, ...]
    size: int  # bytes on disk
    download_s: float
    extract_s: float


def model_dirs(entry: ManifestModel) -> tuple[str, ...]:
    """The top-level directories an archive holds: composing models first, the served one last."""
    return entry.contains if entry.contains else (entry.name,)


def fetch_verified(store: Store, entry: ManifestModel, downloads: Path) -> Path:
    """Download the archive (at most the manifest's size + 1 byte) and check its size and
    sha256; a mismatch deletes it and raises. The message never quotes what was read (the
    object may be a link to another file, whose size or digest is not the client's business)."""
    if not entry.archive:  # decoupled: ``install`` fetches its repository/ files instead
        raise TdkError(
            f"{entry.target_model} has no archive in this release: {entry.mme_left_out}",
            hint="fetch its repository/ files (cache.install does) instead of an archive",
        )
    private_dir(downloads)
    fd, name = tempfile.mkstemp(prefix=f"{entry.name}.", suffix=".tar.gz", dir=downloads)
    os.close(fd)
    path = Path(name)
    try:
        size, digest = fetch_capped(store, entry.archive, path, entry.size)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size > entry.size:
        path.unlink(missing_ok=True)
        raise ArchiveRejected(
            f"{store.describe(entry.archive)} is larger than the manifest's {entry.size} bytes; "
            "refused, not cached",
            hint="the archive was modified after packaging: run `tdk package` again",
        )
    if digest != entry.sha256 or size != entry.size:
        path.unlink(missing_ok=True)
        raise ArchiveRejected(
            f"{store.describe(entry.archive)} does not match the manifest's sha256 "
            f"{entry.sha256[:16]}… ({entry.size} bytes); refused, not cached",
            hint="the archive was modified after packaging: run `tdk package` again",
        )
    return path


def _member_path(member: tarfile.TarInfo, allowed: set[str], source: str) -> PurePosixPath:
    name = member.name
    path = PurePosixPath(name)
    if "\\" in name:
        raise UnsafeInputError(
            f"{source}: {name!r} in archive: a backslash in a file name is refused (Windows "
            "reads it as a directory separator)",
            hint="rename the file in the model directory and re-package",
        )
    if (
        not name
        or name.startswith("/")
        or any(part in ("..", "") for part in name.rstrip("/").split("/"))
        or path.is_absolute()
    ):
        raise UnsafeInputError(
            f"{source}: unsafe path {name!r} in archive",
            hint="archives must hold relative paths without '..' (re-package with tdk)",
        )
    if any(ch == "\x7f" or ord(ch) < 0x20 for ch in name):
        raise UnsafeInputError(
            f"{source}: {name!r} in archive: a file name with a control character (a newline, "
            "a tab) is refused",
            hint="rename the file in the model directory and re-package",
        )
    if not (member.isfile() or member.isdir()):
        raise UnsafeInputError(
            f"{source}: {name!r} is a link or special file; only files and directories are allowed",
            hint="replace links with real files and re-package",
        )
    if path.parts[0] not in allowed:
        raise UnsafeInputError(
            f"{source}: {name!r} is outside the model directories {as_text(sorted(allowed))}",
            hint="the archive does not match its manifest entry: re-package",
        )
    return path


def _check_count(count: int, entry: ManifestModel) -> None:
    if count > MAX_MEMBERS:
        raise ArchiveRejected(
            f"{entry.target_model}: more than {MAX_MEMBERS:,} files and directories in its "
            "archive (a model directory holds a few)",
            hint="package the model directory alone, its weights in few files",
        )


def scan_archive(archive: Path, entry: ManifestModel) -> None:
    """Check every member of ``archive`` as ``extract_safely`` does, writing nothing: a release
    the loader would refuse is refused before it is served (``tdk local switch``)."""
    allowed = set(model_dirs(entry))
    names: set[str] = set()
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for count, member in enumerate(tar, 1):
                _check_count(count, entry)
                names.add(_member_path(member, allowed, entry.target_model).as_posix())
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveRejected(
            f"{entry.target_model}: not a readable gzip tar ({exc.__class__.__name__}: {exc})",
            hint="re-package the release with `tdk package`",
        ) from exc
    missing = [name for name in model_dirs(entry) if f"{name}/config.pbtxt" not in names]
    if missing:
        raise ArchiveRejected(
            f"{entry.target_model}: no config.pbtxt for {', '.join(sorted(missing))}",
            hint="the release does not match its manifest entry: re-package",
        )


def extract_safely(archive: Path, dest: Path, entry: ManifestModel, max_bytes: int) -> int:
    """Extract ``archive`` into the empty directory ``dest``; returns the bytes written."""
    allowed = set(model_dirs(entry))
    written = 0
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for count, member in enumerate(tar, 1):
                _check_count(count, entry)
                relative = _member_path(member, allowed, entry.target_model)
                target = dest.joinpath(*relative.parts)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                written += member.size
                if written > max_bytes:
                    raise ArchiveRejected(
                        f"{entry.target_model}: extracts to more than the {max_bytes} bytes "
                        "of disk cache left beside the loaded models",
                        hint=CACHE_HINT,
                    )
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, COPY_CHUNK)
                os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveRejected(
            f"{entry.target_model}: not a readable gzip tar ({exc.__class__.__name__}: {exc})",
            hint="re-package the release with `tdk package`",
        ) from exc
    _check_configs(dest, entry)
    return written


def _check_configs(dest: Path, entry: ManifestModel) -> None:
    """Every model directory of the copy has its config.pbtxt (else Triton cannot load it)."""
    missing = [name for name in model_dirs(entry) if not (dest / name / "config.pbtxt").is_file()]
    if missing:
        raise ArchiveRejected(
            f"{entry.target_model}: no config.pbtxt for {', '.join(sorted(missing))}",
            hint="the release does not match its manifest entry: re-package",
        )


def install(
    store: Store,
    entry: ManifestModel,
    repository: Path,
    work: Path,
    max_bytes: int,
    skip: frozenset[str] = frozenset(),
    adapt: bool = True,
) -> Extracted:
    """Fetch, verify and extract into a staging dir, then move model dirs into ``repository``.
    A copy without an archive (decoupled) is fetched file by file from the release's
    ``repository/`` (``repo_files``), each file verified against the manifest's sha256.

    Directories in ``skip`` (composing models shared with a model already on disk) are kept.
    """
    started = time.monotonic()
    private_dir(work)
    staging = Path(tempfile.mkdtemp(prefix=f"{entry.name}.", dir=work))
    try:
        if entry.archive:
            size, downloaded = _from_archive(store, entry, work / "downloads", staging, max_bytes)
        else:
            size = fetch_files(store, entry, staging, max_bytes, CACHE_HINT)
            downloaded = time.monotonic()
            _check_configs(staging, entry)
        for name in model_dirs(entry):
            if name in skip:
                continue
            if adapt:  # the local runtime's CPU backends; a pod's Triton has its own
                adapt_model_dir(staging / name)
            target = workdir.inside(repository, repository / name)
            workdir.remove(repository, target)
            os.replace(staging / name, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Extracted(
        dirs=model_dirs(entry),
        size=size,
        download_s=downloaded - started,
        extract_s=time.monotonic() - downloaded,
    )


def _from_archive(
    store: Store, entry: ManifestModel, downloads: Path, staging: Path, max_bytes: int
) -> tuple[int, float]:
    """Fetch and extract the copy's archive into ``staging``: (bytes written, download end)."""
    archive = fetch_verified(store, entry, downloads)
    downloaded = time.monotonic()
    try:
        return extract_safely(archive, staging, entry, max_bytes), downloaded
    finally:
        archive.unlink(missing_ok=True)


def remove_dirs(repository: Path, names: tuple[str, ...]) -> None:
    """Delete model directories from the repository (disk cache eviction)."""
    for name in names:
        workdir.remove(repository, repository / name)


class DiskCache:
    """Which TargetModels are extracted in the repository, their sizes, and shared directories."""

    def __init__(self, repository: Path, limit: int) -> None:
        self.repository = repository
        self.limit = limit
        self.sizes: dict[str, int] = {}  # TargetModel -> bytes extracted
        self.users: dict[str, set[str]] = {}  # model directory -> TargetModels using it

    def has(self, entry: ManifestModel) -> bool:
        return entry.target_model in self.sizes

    def room(self, held: set[str]) -> int:
        """Bytes left for another model once every extracted model not in ``held`` (loaded or
        loading TargetModels) is trimmed."""
        return self.limit - sum(self.sizes.get(target, 0) for target in held)

    def shared(self) -> frozenset[str]:
        """Directories already on disk (another archive's composing models): kept as they are."""
        return frozenset(name for name, users in self.users.items() if users)

    def add(self, entry: ManifestModel, result: Extracted) -> None:
        self.sizes[entry.target_model] = result.size
        for name in result.dirs:
            self.users.setdefault(name, set()).add(entry.target_model)

    def drop(self, entry: ManifestModel) -> None:
        """Delete the model's directories that no other extracted TargetModel uses."""
        self.sizes.pop(entry.target_model, None)
        gone: list[str] = []
        for name in model_dirs(entry):
            users = self.users.get(name, set())
            users.discard(entry.target_model)
            if not users:
                gone.append(name)
                self.users.pop(name, None)
        remove_dirs(self.repository, tuple(gone))

    def trim(self, evictable: list[ManifestModel]) -> None:
        """Drop ``evictable`` models (not loaded, least recently used first) until under limit."""
        total = sum(self.sizes.values())
        for entry in evictable:
            if total <= self.limit:
                return
            if self.has(entry):
                total -= self.sizes[entry.target_model]
                self.drop(entry)
