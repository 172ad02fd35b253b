"""Every hint the kit prints is a command that works as printed (issue 49 item 4): each
`` `tdk ...` `` in the kit's messages names commands and flags that exist, and the hints a
newcomer meets first are run here as printed (quoted paths, the endpoint they are about)."""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli.main import app
from infra.targets.capabilities import VALIDATE
from tests.docs.doc_blocks import commands, problems

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cli", "infra", "packager", "tdk")
TREE = typer.main.get_command(app)
QUOTED = re.compile(r"`(tdk [^`]+)`")
runner = CliRunner()


def _text(node: ast.AST) -> str | None:
    """A string expression's text, each interpolated value as ``X``; None if not a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(part) or "X" for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def kit_commands() -> Iterator[tuple[str, str]]:
    """(file:line, command) of every `` `tdk ...` `` in a string the kit's code builds."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            skip = _docstrings(tree)
            for node in ast.walk(tree):
                text = None if id(node) in skip else _text(node)
                if text is None:
                    continue
                for match in QUOTED.finditer(text):
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}", match.group(1)


def test_every_printed_tdk_command_exists() -> None:
    seen, wrong = 0, []
    for where, line in kit_commands():
        for args in commands(line):
            seen += 1
            if args[:1] == ["X"]:  # the command is a value (test_each_operation_names_...)
                continue
            wrong += [f"{where}: {problem}: {line}" for problem in problems(TREE, args)]
    assert seen > 50, "the collector finds no hints: is it broken?"
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_each_operation_names_its_command() -> None:
    """``tdk {op.command} --help`` (operations.py) is a hint the collector sees as ``tdk X``."""
    from infra.targets.operations import Operation

    for op in Operation:
        assert problems(TREE, op.command.split()) == [], op


def test_the_collector_catches_a_command_that_does_not_exist() -> None:
    node = ast.parse('hint=f"publish again (`tdk publish {x}`) or `tdk local down --endpoint n`"')
    [text] = [t for n in ast.walk(node) if (t := _text(n)) and "tdk" in t][:1]
    found = [problems(TREE, args) for m in QUOTED.finditer(text) for args in commands(m[1])]
    assert found == [["`tdk` has no command 'publish'"], []]


def _run(line: str) -> list[int]:
    """Run each ``tdk`` command of a printed line as the shell would split it."""
    return [runner.invoke(app, args).exit_code for args in commands(line)]


def test_imports_next_line_runs_as_printed(
    bert_onnx: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["import", str(bert_onnx), "--name", "bert", "--out", "my models"])
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.stdout.splitlines() if line.startswith("next:")]
    assert "'my models'" in line and "file://./" not in line
    assert _run(line.removeprefix("next:").split("(")[0]) == [0, 0]
    assert (tmp_path / "release" / "manifest.json").is_file()


def test_validate_outside_a_project_names_the_project_dir_to_pass(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", "--stack", "gke-dev", str(sample_repo)])
    assert result.exit_code == 2 and "Pulumi.yaml" in result.output
    *_, flag = re.findall(r"`(--project-dir [^`]+)`", result.output)
    args = ["validate", "--stack", "gke-dev", *shlex.split(flag), str(sample_repo)]
    again = runner.invoke(app, args)
    assert "Pulumi.yaml does not exist" not in again.output, again.output


def _sized_targets() -> list[str]:
    from infra.targets import registry

    able = registry.able(VALIDATE)
    return [
        name
        for name in able
        if "instance_type" in registry.validate_port(registry.get(name)).flag_keys
    ]


@pytest.mark.parametrize("target", _sized_targets())
def test_a_flag_is_blamed_as_the_flag(target: str) -> None:
    """`validate --target T --instance-type BAD` named the stack key and `pulumi config set`."""
    args = ["validate", "--target", target, "--instance-type", "no-such.size", str(ROOT / "docs")]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "--instance-type: 'no-such.size'" in result.output
    assert "pulumi config set" not in result.output and "triton-deploy-kit:" not in result.output
    [fix] = re.findall(r"`(--instance-type \S+)`", result.output)
    again = runner.invoke(app, [*args[:3], *fix.split(), str(ROOT / "docs")])
    assert "TDK910" not in again.output, again.output


@pytest.mark.e2e
def test_a_named_endpoints_hints_name_it(
    sample_repo: Path, tmp_path: Path, users_folder: Path
) -> None:
    assert runner.invoke(app, ["package", str(sample_repo), "--release", "r"]).exit_code == 0
    args = ["local", "up", "--release", "r", "--endpoint", "mine", "--port", "0", "-d"]
    up = runner.invoke(app, args)
    assert up.exit_code == 0, up.output
    stop = re.search(r"stop with `(tdk [^`]+)`", up.stdout)
    try:
        invoke = ["invoke", "--target-model", "text_classifier-0", "--example"]
        lost = runner.invoke(app, invoke)
        assert lost.exit_code == 2 and "`--endpoint mine`" in lost.output, lost.output
        assert runner.invoke(app, [*invoke, "--endpoint", "mine"]).exit_code == 0
        (tmp_path / "r" / "mme" / "text_classifier-0.tar.gz").write_bytes(b"damaged")
        switched = runner.invoke(app, ["local", "switch", "--endpoint", "mine", "--release", "r"])
        assert switched.exit_code == 1 and switched.output.count("not switched") == 1
        [publish] = re.findall(r"`(tdk package [^`]+)`", switched.output)
        assert not [p for args in commands(publish) for p in problems(TREE, args)], publish
    finally:
        assert stop is not None, up.stdout
        assert _run(stop.group(1)) == [0]
    assert not list((tmp_path / "state").glob("local-mine.json"))
