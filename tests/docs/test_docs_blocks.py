"""The docs are tested: every ``tdk`` command in README.md and docs/*.md exists with every flag
it uses (checked against the CLI's command tree, not executed), and the blocks marked
``<!-- doctest: run -->`` run, in order, against the sample models in a scratch directory
(validate, package to file://, the local endpoint, render, plan with the example trace, tune
with a small budget)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from cli.main import app
from tests.docs.doc_blocks import ROOT, blocks, commands, doc_files, problems, tdk_lines

TREE = typer.main.get_command(app)
RUN_FILES = [path for path in doc_files() if any(block.run for block in blocks(path))]


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.name)
def test_every_tdk_command_and_flag_exists(path: Path) -> None:
    seen, wrong = 0, []
    for where, line in tdk_lines(path):
        for args in commands(line):
            seen += 1
            wrong += [f"{where}: {problem}\n    {line.strip()}" for problem in problems(TREE, args)]
    assert not wrong, "\n".join(wrong)
    if path.name != "rules.md":
        assert seen, f"{path.name} shows no tdk command: is the extraction broken?"


def test_the_checker_catches_drift() -> None:
    assert problems(TREE, ["package", "REPO", "--release", "URL", "--copies", "2"]) == []
    assert problems(TREE, ["render", "k8s", "--stack", "gke-dev"]) == []
    assert problems(TREE, ["package", "--no-such-flag"]) == [
        "`tdk package` has no option --no-such-flag"
    ]
    assert problems(TREE, ["deploy", "--x"]) == ["`tdk` has no command 'deploy'"]
    assert problems(TREE, ["local", "upp"]) == ["`tdk local` has no command 'upp'"]
    line = 'tdk invoke --target-model a.tar.gz --text "a # b" --json > out.json  # comment --nope'
    assert commands(line) == [["invoke", "--target-model", "a.tar.gz", "--text", "a # b", "--json"]]
    assert commands("x=$(tdk --version) && tdk validate R | tee log") == [
        ["--version"],
        ["validate", "R"],
    ]


def _workspace(tmp: Path, sample_repo: Path) -> dict[str, str]:
    """The scratch directory the docs' commands run in: the sample models and inputs where
    `make models` puts them, the committed stack files and example trace."""
    shutil.copytree(sample_repo, tmp / "model_repos" / "samples")
    inputs = [sys.executable, str(ROOT / "model_repos" / "inputs.py")]
    subprocess.run([*inputs, "--out", str(tmp / "model_repos" / "inputs")], check=True, timeout=60)
    shutil.copytree(ROOT / "docs" / "examples", tmp / "docs" / "examples")
    for stack in ROOT.glob("Pulumi*.yaml"):
        shutil.copy(stack, tmp / stack.name)
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "TDK_STATE_DIR": str(tmp / "state"),
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }


@pytest.mark.e2e
@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_marked_blocks_run(path: Path, sample_repo: Path, tmp_path: Path) -> None:
    env = _workspace(tmp_path, sample_repo)
    try:
        for block in (b for b in blocks(path) if b.run):
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.text],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=240,
            )
            output = done.stdout + done.stderr
            assert done.returncode == 0, f"{block.where} failed ({done.returncode}):\n{output}"
            assert "Traceback" not in output and "\x1b[" not in output, output
    finally:  # a block that started the local endpoint and failed before stopping it
        if (tmp_path / "state").exists():
            subprocess.run(
                ["tdk", "local", "down"], cwd=tmp_path, env=env, capture_output=True, timeout=120
            )
