"""Fetch a copy published without an archive (decoupled: SageMaker MME refuses it) from the
release's ``repository/`` files, each one checked before it is used.

Every path in the manifest's ``files`` is checked with ``release.files_problem`` (relative,
inside the copy's model directories, no ``..``), every file is fetched with a cap of the size
the store lists for it (``packager/stores/capped.py``), and its sha256 is compared with the
manifest's before it is moved into place. The files of the copy together must fit in what the
disk cache has left. Everything is written into a fresh staging directory only.
"""

from __future__ import annotations

import os
from pathlib import Path

from infra.targets.local.release import REPACKAGE, files_problem
from packager.manifest import REPOSITORY_PREFIX, ManifestModel
from packager.stores import Store
from packager.stores.capped import fetch_capped
from tdk.errors import TdkError, UnsafeInputError

FETCHING = ".tdk-fetching"  # not a model name (those start with a letter, a digit or '_')
MODIFIED = "the release's repository/ files were modified after packaging: run `tdk package` again"


class FileRejected(TdkError):
    """A repository file does not match the manifest or does not fit in the disk cache."""


def listed_sizes(store: Store, entry: ManifestModel, max_bytes: int, hint: str) -> dict[str, int]:
    """Each file's size as the store lists it; refuses a file the store does not hold and a copy
    whose files together are larger than ``max_bytes``."""
    allowed = entry.contains if entry.contains else (entry.name,)
    listing: dict[str, int] = {}
    for name in allowed:
        listing.update(store.list_sizes(f"{REPOSITORY_PREFIX}{name}/"))
    sizes: dict[str, int] = {}
    for rel in sorted(entry.files):
        key = REPOSITORY_PREFIX + rel
        if key not in listing:
            raise FileRejected(
                f"{entry.target_model}: {store.describe(key)} is missing from the store",
                hint="publish the release again (`tdk package REPO --release URL`, the same "
                "URL): a republish replaces what is missing or damaged",
            )
        sizes[rel] = listing[key]
    if sum(sizes.values()) > max_bytes:
        raise FileRejected(
            f"{entry.target_model}: its repository/ files hold more than the {max_bytes} bytes "
            "of disk cache left beside the loaded models",
            hint=hint,
        )
    return sizes


def fetch_files(store: Store, entry: ManifestModel, dest: Path, max_bytes: int, hint: str) -> int:
    """Fetch every file of ``entry`` into the empty directory ``dest``, verified against the
    manifest's sha256; returns the bytes written. On a failure the caller removes ``dest``."""
    problem = files_problem(entry)
    if problem:
        raise UnsafeInputError(f"{entry.target_model}: {problem}", hint=REPACKAGE)
    sizes = listed_sizes(store, entry, max_bytes, hint)
    fetching = dest / FETCHING
    for rel, listed in sizes.items():
        key = REPOSITORY_PREFIX + rel
        size, digest = fetch_capped(store, key, fetching, listed)
        if size != listed or digest != entry.files[rel]:
            fetching.unlink(missing_ok=True)
            raise FileRejected(
                f"{store.describe(key)} does not match the manifest's sha256 "
                f"{entry.files[rel][:16]}…; refused, not cached",
                hint=MODIFIED,
            )
        _place(fetching, dest, rel, entry.target_model)
    return sum(sizes.values())


def _place(fetched: Path, dest: Path, rel: str, target_model: str) -> None:
    """Move the verified file to ``dest/rel`` (directories made as needed, never through a
    link: ``dest`` is fresh and only this module writes into it)."""
    target = dest.joinpath(*rel.split("/"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.parent.resolve() != dest.resolve().joinpath(*rel.split("/")[:-1]):
            raise FileRejected(f"{target_model}: {rel!r} leaves the model directory", hint=MODIFIED)
        if target.exists():
            raise FileRejected(f"{target_model}: {rel!r} is listed twice", hint=REPACKAGE)
        os.replace(fetched, target)
        os.chmod(target, 0o644)
    except OSError as exc:  # a path that is a file in one entry and a directory in another
        fetched.unlink(missing_ok=True)
        raise FileRejected(
            f"{target_model}: cannot place {rel!r} ({exc.strerror or exc})", hint=REPACKAGE
        ) from exc
