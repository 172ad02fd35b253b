"""``tdk package`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app

runner = CliRunner(env={"COLUMNS": "200"})


def test_package_json_report(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    result = runner.invoke(
        app, ["package", str(sample_repo), "--copies", "2", "--release", f"file://{dest}", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["manifest_written"] is True
    assert len(report["models"]) == 8
    assert (dest / "manifest.json").exists()
    again = runner.invoke(
        app, ["package", str(sample_repo), "--copies", "2", "--release", f"file://{dest}", "--json"]
    )
    assert json.loads(again.stdout)["uploaded_bytes"] == 0


def test_package_human_table(sample_repo: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["package", str(sample_repo), "--release", f"file://{tmp_path / 'r'}"]
    )
    assert result.exit_code == 0, result.output
    assert "text_pipeline-0.tar.gz" in result.stdout


def test_missing_repository_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["package", str(tmp_path / "nope"), "--release", f"file://{tmp_path / 'r'}"]
    )
    assert result.exit_code == 2
    assert "no such file or directory" in result.output
    assert not (tmp_path / "r" / "manifest.json").exists()


def test_bad_template_exits_two_and_publishes_nothing(sample_repo: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "package",
            str(sample_repo),
            "--copies",
            "2",
            "--name-template",
            "{model}",
            "--release",
            f"file://{tmp_path / 'r'}",
        ],
    )
    assert result.exit_code == 2
    assert "{i}" in result.output
    assert not (tmp_path / "r" / "manifest.json").exists()


def test_invalid_model_exits_one_with_findings(sample_repo: Path, tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(sample_repo, repo)
    config = repo / "image_classifier" / "config.pbtxt"
    config.write_text(config.read_text().replace("max_batch_size: 16", "max_batch_size: -3"))
    result = runner.invoke(app, ["package", str(repo), "--release", f"file://{tmp_path / 'r'}"])
    assert result.exit_code == 1
    assert "max_batch_size" in result.output
    assert not (tmp_path / "r").exists() or not (tmp_path / "r" / "manifest.json").exists()


def test_upload_progress_is_shown_in_bytes_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from cli.output import Output

    stream = io.StringIO()
    out = Output(err=Console(file=stream, force_terminal=True, width=120))
    with out.progress() as start:
        advance = start("uploading to s3://b/r", 3_000_000, "bytes")
        advance(1_000_000)
        start("packaging", 4)(2)
    text = stream.getvalue()
    assert "uploading to s3://b/r" in text and "1.0 MB/3.0 MB" in text
    assert "2/4" in text


def test_progress_is_silent_in_json_mode() -> None:
    import io

    from rich.console import Console

    from cli.output import Output

    stream = io.StringIO()
    out = Output(json_mode=True, err=Console(file=stream, force_terminal=True))
    with out.progress() as start:
        start("uploading", 10, "bytes")(5)
    assert stream.getvalue() == ""
