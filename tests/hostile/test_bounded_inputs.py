"""Issue 25 items 9 and 10 (outside the endpoint): hostile stack files, templates and
environment end in a message naming the file or the field, never a traceback or a memory blowup.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner(env={"COLUMNS": "200"})
ROOT = Path(__file__).resolve().parents[2]
STACK = "gke-dev"


def _alias_bomb(levels: int = 6) -> str:
    """``levels`` nested anchors of ten aliases each: 10**levels values once expanded."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


STACK_FILES = {
    "alias-bomb": ("text", _alias_bomb(), "aliases expand to more than"),
    "alias-bomb-in-config": (
        "text",
        _alias_bomb().replace("l6:", "config:\n  triton-deploy-kit:name:"),
        "aliases expand to more than",
    ),
    "deeply-nested": ("text", "a: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than"),
    "not-utf8": ("bytes", "config:\n  gcp:project: caf\xe9\n", "not UTF-8"),
}
COMMANDS = {
    "render": ["render", "k8s", "--stack", STACK, "--out", "-"],
    "validate": ["validate", "{samples}", "--stack", STACK],
    "doctor": ["doctor", "--stack", STACK],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    return tmp_path


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", sorted(STACK_FILES))
def test_hostile_stack_file_is_refused_with_its_path(
    project: Path, command: str, kind: str, sample_repo: Path
) -> None:
    how, content, fragment = STACK_FILES[kind]
    stack_file = project / f"Pulumi.{STACK}.yaml"
    if how == "bytes":
        stack_file.write_bytes(content.encode("latin-1"))
    else:
        stack_file.write_text(content)
    args = [arg.format(samples=sample_repo) for arg in COMMANDS[command]]
    result = runner.invoke(app, [*args, "--project-dir", str(project)])
    assert result.exit_code != 0, result.output
    flat = re.sub(r"[\s│]+", "", result.output)  # doctor wraps its message in a table
    assert re.sub(r"\s+", "", fragment) in flat and str(stack_file) in flat, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


@pytest.mark.parametrize(
    "template",
    ["{", "}", "{i:>999999999}", "{model}-{i:.300}", "{model:d}-{i}", "{i:{model}}"],
)
def test_hostile_name_template_is_refused_before_formatting(
    template: str, tmp_path: Path, sample_repo: Path
) -> None:
    dest = tmp_path / "release"
    args = ["package", str(sample_repo / "tokenizer"), "--release", f"file://{dest}"]
    result = runner.invoke(app, [*args, "--name-template", template])
    assert result.exit_code == 2, result.output
    assert "--name-template" in result.output and "hint:" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert not dest.exists()


def test_tdk_today_garbage_is_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "garbage")
    result = runner.invoke(app, ["doctor", "--stack", STACK, "--project-dir", str(ROOT)])
    assert result.exit_code != 0
    assert "TDK_TODAY='garbage' is not a date" in result.output and "YYYY-MM-DD" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


@pytest.mark.parametrize("body", ['raise RuntimeError("boom")\n', "def (\n", "ENTRY = 1 / 0\n"])
def test_a_broken_extra_target_module_leaves_help_working(body: str, tmp_path: Path) -> None:
    (tmp_path / "broken_target.py").write_text(body)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
        "TDK_EXTRA_TARGETS": "broken_target",
    }
    command = [sys.executable, "-m", "cli", "--help"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout and "Traceback" not in done.stderr
    assert "warning:" in done.stderr and "broken_target" in done.stderr
    again = subprocess.run(
        [sys.executable, "-m", "cli", "endpoint", "status", "--target", "local"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert "TDK_EXTRA_TARGETS" in again.stderr
