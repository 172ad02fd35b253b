"""A published release for sagemaker-ic stacks under mocks: the program declares components
only for copies the release it names holds (issue 37), so tests name one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.local.local_helpers import make_release


def release_holding(sample_repo: Path, dest: Path, *names: str) -> str:
    """The file:// URL of a release in ``dest`` whose manifest lists ``names`` (each the
    sample's first copy, renamed), or the sample's copies when none are given."""
    manifest = make_release(sample_repo, dest, copies=1)
    if names:
        base = manifest.models[0]
        renamed = tuple(
            replace(base, name=n, target_model=f"{n}.tar.gz", archive=f"mme/{n}.tar.gz")
            for n in names
        )
        (dest / "manifest.json").write_text(replace(manifest, models=renamed).to_json())
    return f"file://{dest}"
