"""Help in one style (issue 49 item 7): usage lines as click writes them (``SOURCE``,
``[MODEL_DIR]``, ``PATH...``; typer wrote ``{SOURCE}``, ``[model_dir]``), choices shown for
``--triton-netns``, and doctor outside a project says where to run it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"})


def _leaves(command: typer.main.click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    subs = getattr(command, "commands", None)
    if not subs:
        return [path]
    return [leaf for name, sub in subs.items() for leaf in _leaves(sub, (*path, name))]


@pytest.mark.parametrize("path", _leaves(typer.main.get_command(app)), ids=" ".join)
def test_usage_lines_name_arguments_in_capitals_without_braces(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    [usage] = [line for line in result.output.splitlines() if "Usage:" in line]
    assert "{" not in usage and "}" not in usage, usage
    words = usage.split("[OPTIONS]", 1)[1].split() if "[OPTIONS]" in usage else []
    for word in words:
        assert re.fullmatch(r"\[?[A-Z0-9_]+\]?(\.\.\.)?", word), usage


def test_triton_netns_shows_its_choices() -> None:
    result = runner.invoke(app, ["local", "up", "--help"])
    assert "[auto | on | off]" in result.output


def test_doctor_outside_a_project_says_where_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["doctor"])
    text = " ".join(result.output.split())
    assert "no stack file" in text and "--project-dir" in text, result.output
    assert "feasibility as of" not in text


def _command(path: tuple[str, ...]) -> typer.main.click.Command:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


@pytest.mark.parametrize("path", [(), *_leaves(typer.main.get_command(app))], ids=" ".join)
def test_every_option_name_is_whole_at_80_columns(path: tuple[str, ...]) -> None:
    """`tdk build --help` at 80 columns showed `--hardware-compatibil…` (issue 49 item 7): every
    option's name is printed whole, and no word of the help is cut with an ellipsis."""
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output, result.output
    shown = set(re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*(?![\w-])", result.output))
    names = {o for p in _command(path).params for o in [*p.opts, *p.secondary_opts]}
    hidden = {o for p in _command(path).params if getattr(p, "hidden", False) for o in p.opts}
    hidden |= {"--install-completion", "--show-completion"}  # hidden as the root group runs
    missing = {name for name in names - hidden if name.startswith("--")} - shown
    assert not missing, result.output
