"""``tdk releases`` lists a store's releases to roll back to (issue 40, row 5): each prefix with
a manifest, oldest first; a store without one is an error naming the fix."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from tests.local.local_helpers import make_release


def test_releases_lists_each_release_oldest_first(sample_repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "releases"
    make_release(sample_repo, root / "r1", copies=1, only=("tokenizer",))
    make_release(sample_repo, root / "r2", copies=2, only=("tokenizer",))
    (root / "r3-incomplete" / "mme").mkdir(parents=True)  # no manifest: not a release
    result = CliRunner().invoke(app, ["releases", "--store", root.as_uri(), "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    models = {r["url"]: r["models"] for r in found}
    assert models == {(root / "r1").as_uri(): 1, (root / "r2").as_uri(): 2}
    created = [r["created_at"] for r in found]
    assert created == sorted(created)  # oldest first
    table = CliRunner().invoke(app, ["releases", "--store", root.as_uri()])
    assert table.exit_code == 0 and "r2" in table.stdout


def test_a_store_without_releases_names_the_fix(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["releases", "--store", tmp_path.as_uri()])
    assert result.exit_code == 2
    assert "no release under" in result.output and "tdk package" in result.output


def test_one_bad_manifest_is_marked_and_the_others_listed(
    sample_repo: Path, tmp_path: Path
) -> None:
    root = tmp_path / "releases"
    make_release(sample_repo, root / "r1", copies=1, only=("tokenizer",))
    (root / "r0-bad").mkdir()
    (root / "r0-bad" / "manifest.json").write_text("{not json")
    result = CliRunner().invoke(app, ["releases", "--store", root.as_uri(), "--json"])
    assert result.exit_code == 0, result.output
    found = {r["url"]: r for r in json.loads(result.stdout)}
    assert found[(root / "r1").as_uri()]["models"] == 1
    assert "problem" not in found[(root / "r1").as_uri()]
    assert "manifest" in found[(root / "r0-bad").as_uri()]["problem"]
    table = CliRunner().invoke(app, ["releases", "--store", root.as_uri()])
    assert table.exit_code == 0, table.output
    assert "r1" in table.stdout and "unreadable" in table.stdout
    assert "r0-bad is not a release to roll back to" in table.stderr
