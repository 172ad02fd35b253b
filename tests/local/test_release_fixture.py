"""The tests' release helper: the real publisher's output, published once per distinct input,
and every caller gets a copy of its own (so a test that corrupts its release harms no other)."""

from __future__ import annotations

import shutil
from pathlib import Path

from packager.manifest import Manifest
from tests.local import local_helpers
from tests.local.local_helpers import make_release


def test_same_input_is_published_once_and_each_caller_owns_its_copy(
    sample_repo: Path, tmp_path: Path
) -> None:
    before = local_helpers.BUILD_COUNT[0]
    first = make_release(sample_repo, tmp_path / "a", copies=2, only=("tokenizer",))
    built = local_helpers.BUILD_COUNT[0]
    second = make_release(sample_repo, tmp_path / "b", copies=2, only=("tokenizer",))
    assert local_helpers.BUILD_COUNT[0] == built <= before + 1
    assert first == second
    assert [m.name for m in first.models] == ["tokenizer-0", "tokenizer-1"]
    archive = tmp_path / "a" / first.models[0].archive
    archive.write_bytes(b"corrupted")
    assert (tmp_path / "b" / first.models[0].archive).read_bytes() != b"corrupted"
    third = make_release(sample_repo, tmp_path / "c", copies=2, only=("tokenizer",))
    assert (tmp_path / "c" / third.models[0].archive).read_bytes() != b"corrupted"


def test_the_release_is_what_tdk_package_writes(sample_repo: Path, tmp_path: Path) -> None:
    manifest = make_release(sample_repo, tmp_path / "store", copies=1, only=("tokenizer",))
    on_disk = Manifest.from_json((tmp_path / "store" / "manifest.json").read_text())
    assert on_disk == manifest
    model = manifest.models[0]
    assert model.files, "the publisher records the plain repository's files"
    for rel in model.files:
        assert (tmp_path / "store" / "repository" / rel).is_file()


def test_a_changed_model_is_published_again(sample_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(sample_repo / "tokenizer", repo / "tokenizer")
    first = make_release(repo, tmp_path / "a", copies=1)
    (repo / "tokenizer" / "1" / "extra.txt").write_text("a new file\n")
    before = local_helpers.BUILD_COUNT[0]
    second = make_release(repo, tmp_path / "b", copies=1)
    assert local_helpers.BUILD_COUNT[0] == before + 1
    assert first.models[0].sha256 != second.models[0].sha256
