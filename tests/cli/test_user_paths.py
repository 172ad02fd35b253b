"""Paths a user types mean the directory the command runs in (issue 49 item 1): the local
endpoint's background server starts elsewhere, so `local up` and `local switch` resolve a
relative release before handing it over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()


@pytest.mark.e2e
def test_relative_releases_are_the_users_own(
    sample_repo: Path, tmp_path: Path, users_folder: Path
) -> None:
    for release, copies in (("build/release", "1"), ("build/two", "2")):
        args = ["package", str(sample_repo), "--copies", copies, "--release", release]
        assert runner.invoke(app, args).exit_code == 0
    up = runner.invoke(app, ["local", "up", "--release", "build/release", "--port", "0", "-d"])
    assert up.exit_code == 0, up.output
    try:
        status = json.loads(runner.invoke(app, ["local", "status", "--json"]).stdout)
        assert status["release"] == str(tmp_path / "build" / "release")
        answer = runner.invoke(app, ["invoke", "--target-model", "text_classifier-0", "--example"])
        assert answer.exit_code == 0, answer.output
        switched = runner.invoke(app, ["local", "switch", "--release", "build/two", "--json"])
        assert switched.exit_code == 0, switched.output
        assert len(json.loads(switched.stdout)["models"]) == 2 * len(list(sample_repo.iterdir()))
        status = json.loads(runner.invoke(app, ["local", "status", "--json"]).stdout)
        assert status["release"] == str(tmp_path / "build" / "two")
    finally:
        down = runner.invoke(app, ["local", "down"])
    assert down.exit_code == 0, down.output


def test_a_relative_file_url_is_refused_with_the_plain_path_to_use(tmp_path: Path) -> None:
    result = runner.invoke(app, ["releases", "--store", "file://./my release"])
    assert result.exit_code != 0
    assert "file:///abs/path" in result.output and "'./my release'" in result.output
