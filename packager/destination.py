"""Where ``tdk package`` may publish: every refusal of a destination itself (the filesystem
root, a home directory, a folder of another user or with links in it, inside another release
or an input), decided before any input is read or any object written."""

from __future__ import annotations

from pathlib import Path

from packager.manifest import ARCHIVE_PREFIX, LEDGER_NAME, MANIFEST_NAME, REPOSITORY_PREFIX
from packager.stores import Store
from tdk.errors import UsageError


def check_destination(dest: Store, prune: bool) -> None:
    """Refuse a release root where publishing (or pruning) would hit what is not ours."""
    problem = dest.unsafe_root(prune)
    if problem:
        raise UsageError(
            f"refusing to publish to {dest.url}: {problem}",
            hint="publish into a directory or prefix of its own, e.g. "
            f"{dest.url.rstrip('/')}/releases/r1 (is a shell variable in --release unset?)",
        )


def check_nesting(dest: Store) -> None:
    """Refuse a release root inside another release's ``mme/`` or ``repository/``: SageMaker
    would load the inner release's files as models, Triton would take them for model dirs."""
    parts = dest.root_parts
    for i, part in enumerate(parts):
        if part + "/" not in (ARCHIVE_PREFIX, REPOSITORY_PREFIX):
            continue
        outer = parts[:i]
        if dest.exists_at([*outer, MANIFEST_NAME]) or dest.exists_at([*outer, LEDGER_NAME]):
            where = ("/" if dest.local_root else "") + "/".join(outer)
            raise UsageError(
                f"refusing to publish to {dest.url}: it is inside the {part}/ of the release "
                f"at {where}, whose files SageMaker and Triton would take for models",
                hint="publish to a directory or prefix of its own, beside that release, not in it",
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


def check_where(dest: Store, repos: list[Path], prune: bool) -> None:
    """Every refusal of the destination itself, before any input is read."""
    check_destination(dest, prune)
    check_nesting(dest)
    check_overlap(dest, repos)
