"""`tdk package` refuses exactly what `tdk validate` rejects: for every rule fixture (failing
and passing), publishing the repository fails if and only if validation finds an error. Also
the same message for links and special files, and the empty model file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.publish import publish
from packager.stores import open_store
from packager.validate.runner import has_errors, validate_paths
from tdk.errors import TdkError
from tests.validate.test_rule_fixtures import FIXTURES

CASES = [(code, which) for code in sorted(FIXTURES) for which in (0, 1)]


def _paths(repo: Path) -> list[Path]:
    other = repo.parent / "other"  # the second repository of the TDK105 fixture
    return [repo, other] if other.exists() else [repo]


@pytest.mark.parametrize(
    ("code", "which"), CASES, ids=[f"{c}-{'bad' if w == 0 else 'good'}" for c, w in CASES]
)
def test_package_verdict_matches_validate(
    sample_repo: Path, tmp_path: Path, code: str, which: int
) -> None:
    repo = Path(shutil.copytree(sample_repo, tmp_path / "repo"))
    FIXTURES[code][which](repo)
    paths = _paths(repo)
    rejected_by_validate = has_errors(validate_paths(paths))
    dest = tmp_path / "release"
    try:
        publish(paths, open_store(f"file://{dest}"), copies=1)
        rejected_by_package = False
    except TdkError:
        rejected_by_package = True
    assert rejected_by_package == rejected_by_validate
    assert (dest / "manifest.json").exists() != rejected_by_package


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_links_and_fifos_same_message_in_both_commands(
    repo: Path, tmp_path: Path, kind: str
) -> None:
    target = repo / "tokenizer" / "1" / "entry"
    if kind == "symlink":
        target.symlink_to("/etc/passwd")
    else:
        os.mkfifo(target)
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", str(repo)])
    packaged = runner.invoke(app, ["package", str(repo), "--release", f"file://{tmp_path / 'rel'}"])
    assert validated.exit_code == 1 and packaged.exit_code == 1
    expected = "is a symbolic link" if kind == "symlink" else "is not a regular file or directory"
    assert f"{target} {expected}" in validated.stdout
    assert f"{target} {expected}" in packaged.output
    assert not (tmp_path / "rel" / "manifest.json").exists()


def test_empty_onnx_file_says_empty(repo: Path) -> None:
    (repo / "image_classifier" / "1" / "model.onnx").write_bytes(b"")
    findings = [f for f in validate_paths([repo]) if f.severity == "error"]
    assert [f.code for f in findings] == ["TDK115"]
    assert "is empty (0 bytes)" in findings[0].message
    assert not any("no input" in f.message for f in findings)


def test_directory_without_config_is_refused_by_package(repo: Path, tmp_path: Path) -> None:
    (repo / "half_copied" / "1").mkdir(parents=True)
    result = CliRunner().invoke(
        app, ["package", str(repo), "--release", f"file://{tmp_path / 'r'}"]
    )
    assert result.exit_code == 1
    assert "half_copied has no config.pbtxt" in result.output
    assert not (tmp_path / "r" / "manifest.json").exists()
