"""`tdk validate` through the real CLI app (typer's CliRunner): exit codes, table, --json."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tritonclient.grpc import model_config_pb2 as pb
from typer.testing import CliRunner

from cli.main import app
from packager.repository import discover
from packager.validate.runner import require_valid, validate_paths
from tdk.errors import ValidationFailed

Edit = Callable[[str, Callable[[Any], object]], Path]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_valid_repository_exits_0(runner: CliRunner, sample_repo: Path) -> None:
    result = runner.invoke(app, ["validate", str(sample_repo)])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_invalid_repository_exits_1_with_a_table(
    runner: CliRunner, repo: Path, edit_config: Edit
) -> None:
    edit_config("text_classifier", lambda c: c.dynamic_batching.preferred_batch_size.append(64))
    result = runner.invoke(app, ["validate", str(repo)], env={"COLUMNS": "400"})
    assert result.exit_code == 1, result.output
    assert "dynamic_batching.preferred_batch_size" in result.output
    assert "preferred batch size 64" in result.output and "raise max_batch_size" in result.output
    assert "1 error(s), 0 warning(s)" in result.output


def test_json_lists_every_finding(runner: CliRunner, repo: Path, edit_config: Edit) -> None:
    edit_config("text_classifier", lambda c: setattr(c, "max_batch_size", -1))
    result = runner.invoke(app, ["validate", "--json", str(repo)])
    assert result.exit_code == 1
    findings = json.loads(result.stdout)
    assert isinstance(findings, list) and findings
    assert set(findings[0]) == {
        "file",
        "field",
        "message",
        "fix",
        "severity",
        "model",
        "code",
        "line",
        "col",
    }
    assert any(f["field"] == "max_batch_size" and f["model"] == "text_classifier" for f in findings)


def test_json_of_a_valid_repository_is_an_empty_list(runner: CliRunner, sample_repo: Path) -> None:
    result = runner.invoke(app, ["validate", str(sample_repo), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_warnings_alone_exit_0(runner: CliRunner, repo: Path, edit_config: Edit) -> None:
    edit_config(
        "image_classifier", lambda c: c.instance_group.add(kind=pb.ModelInstanceGroup.KIND_GPU)
    )
    result = runner.invoke(app, ["validate", str(repo)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "warning" in result.output and "KIND_GPU" in result.output


def test_several_paths_are_checked_together(runner: CliRunner, repo: Path) -> None:
    paths = [str(repo / m) for m in ("text_pipeline", "tokenizer", "text_classifier")]
    assert runner.invoke(app, ["validate", *paths]).exit_code == 0
    assert runner.invoke(app, ["validate", paths[0]]).exit_code == 1  # its steps are missing


def test_missing_path_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such file or directory" in result.output


def test_no_path_is_a_usage_error(runner: CliRunner) -> None:
    assert runner.invoke(app, ["validate"]).exit_code == 2


def test_require_valid_raises_with_the_findings(repo: Path, edit_config: Edit) -> None:
    require_valid(discover(repo))  # the untouched samples pass
    edit_config("tokenizer", lambda c: setattr(c.output[0], "data_type", pb.TYPE_FP32))
    with pytest.raises(ValidationFailed) as caught:
        require_valid(discover(repo))
    assert "1 validation error(s)" in caught.value.message
    assert caught.value.findings and caught.value.findings[0].model == "text_pipeline"
    with pytest.raises(ValidationFailed):
        require_valid([repo])  # paths work too


def test_require_valid_ignores_warnings(repo: Path, edit_config: Edit) -> None:
    edit_config(
        "image_classifier", lambda c: c.instance_group.add(kind=pb.ModelInstanceGroup.KIND_GPU)
    )
    findings = validate_paths([repo])
    warned = [f for f in findings if f.model == "image_classifier"]
    assert warned and {f.severity for f in findings} == {"warning"}  # the edit warns, only
    require_valid(discover(repo))  # a warning alone does not refuse: no ValidationFailed


def test_table_shows_bracketed_fields_verbatim(
    runner: CliRunner, repo: Path, edit_config: Edit
) -> None:
    def rename_key(config: Any) -> None:
        step = config.ensemble_scheduling.step[0]
        step.input_map["texts"] = step.input_map.pop("text")

    edit_config("text_pipeline", rename_key)
    result = runner.invoke(app, ["validate", str(repo)], env={"COLUMNS": "400"})
    assert result.exit_code == 1
    assert "input_map[texts]" in result.output  # not swallowed as rich markup
