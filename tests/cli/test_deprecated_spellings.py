"""One vocabulary (issue 40, row 6): one name per concept, the old spellings still working for
a release with a deprecation warning. This test lists every old spelling: each is rewritten to
the new one and warns, the new one is what the help shows, and nothing the kit's docs or hints
say uses an old one."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cli.main import DEPRECATED_IN, DEPRECATED_OPTIONS, DEPRECATED_VALUES, app, modernize
from infra.config import DEPRECATED_KEYS
from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]

#: every old spelling this release accepts: (a command line using it, the line it means)
OLD_SPELLINGS = [
    (["package", "R", "--endpoint-url", "U"], ["package", "R", "--s3-endpoint-url", "U"]),
    (["plan", "b.json", "--slo-ms", "50"], ["plan", "b.json", "--latency-budget-ms", "50"]),
    (["plan", "b.json", "--slo-ms=50"], ["plan", "b.json", "--latency-budget-ms=50"]),
    (["local", "down", "--name", "x"], ["local", "down", "--endpoint", "x"]),
    (["local", "up", "--name=x"], ["local", "up", "--endpoint=x"]),
    (["validate", "R", "--format", "json"], ["validate", "R", "--json"]),
    (["validate", "R", "--format=json"], ["validate", "R", "--json"]),
    (["metrics", "--target", "k8s"], ["metrics", "--target", "gke"]),
    # one release: --release; --store is a store of releases or of plans
    (["package", "R", "--dest", "U"], ["package", "R", "--release", "U"]),
    (["package", "R", "--dest=U"], ["package", "R", "--release=U"]),
    (["package", "R", "--plans", "P"], ["package", "R", "--store", "P"]),
    (["invoke", "--store", "U"], ["invoke", "--release", "U"]),
    (["bench", "--store=U"], ["bench", "--release=U"]),
    # one command per bench: tensors (`tdk bench`) and generation (`tdk bench generate`)
    (
        ["bench", "--target-model", "m", "--prompt", "hi"],
        ["bench", "generate", "--target-model", "m", "--prompt", "hi"],
    ),
    (["bench", "--prompts=p.txt", "-c", "2"], ["bench", "generate", "--prompts=p.txt", "-c", "2"]),
    (["local", "up", "--store", "U"], ["local", "up", "--release", "U"]),
    (["local", "switch", "--store", "U"], ["local", "switch", "--release", "U"]),
    (["local", "check", "--store", "U"], ["local", "check", "--release", "U"]),
]

#: every stack key this release still accepts, and the key that replaces it
OLD_STACK_KEYS = {
    "sagemakerAlarmEmail": "alertEmail",
    "k8sAlertEmail": "alertEmail",
    "budgetEmail": "alertEmail",
    "sagemakerIcManifestUrl": "releaseUrl",
}


@pytest.fixture
def warned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    said: list[str] = []
    monkeypatch.setattr(registry, "on_deprecated", said.append)
    return said


@pytest.mark.parametrize(("old", "new"), OLD_SPELLINGS, ids=lambda a: " ".join(a))
def test_an_old_spelling_means_the_new_one_and_warns(
    old: list[str], new: list[str], warned: list[str]
) -> None:
    assert modernize(old) == new
    assert len(warned) == 1


def test_the_list_covers_every_deprecation() -> None:
    used = {arg.partition("=")[0] for line, _ in OLD_SPELLINGS for arg in line}
    assert set(DEPRECATED_OPTIONS) <= used
    assert {old for _, old in DEPRECATED_IN} <= used
    assert {option for _, option, _ in DEPRECATED_VALUES} <= used
    assert set(registry.DEPRECATED) <= used


def test_new_spellings_do_not_warn_and_scoped_ones_stay_in_their_group(
    warned: list[str],
) -> None:
    for line in (
        ["package", "R", "--name-template", "{model}"],
        ["validate", "R", "--format", "sarif"],
        ["tune", "--latency-budget-ms", "5"],
        ["releases", "--store", "S"],
        ["build", "M", "--stack", "s", "--store", "S"],
        ["package", "R", "--release", "U", "--store", "S"],
    ):
        assert modernize(line) == line
    assert warned == []


def test_the_help_shows_only_the_new_spellings() -> None:
    command = typer.main.get_command(app)
    options = {
        opt
        for group in command.commands.values()  # type: ignore[attr-defined]
        for sub in [group, *getattr(group, "commands", {}).values()]
        for param in sub.params
        for opt in param.opts
    }
    assert {"--latency-budget-ms", "--endpoint", "--json", "--release"} <= options
    assert not ({"--slo-ms", "--endpoint-url", "--dest", "--plans"} & options)


def test_release_names_one_release_and_store_a_store_of_them() -> None:
    """Every option naming one release is --release; --store only where a store is meant."""
    command = typer.main.get_command(app)
    spelled: dict[str, set[str]] = {}
    for name, group in command.commands.items():  # type: ignore[attr-defined]
        subs = getattr(group, "commands", None) or {"": group}
        for sub_name, sub in subs.items():
            for param in sub.params:
                for opt in set(param.opts) & {"--release", "--store"}:
                    spelled.setdefault(opt, set()).add(f"{name} {sub_name}".strip())
    assert spelled["--store"] == {"releases", "build", "package"}  # a store; package's plans
    assert {"package", "validate", "invoke", "bench tensors", "bench generate"} <= spelled[
        "--release"
    ]
    assert {"local up", "local switch"} <= spelled["--release"]


def _emitted_commands(path: Path) -> list[list[str]]:
    """The ``tdk`` commands a source file can print: ``tdk ...`` in any string (hints, next
    steps, docstrings) and argv lists starting with ``"tdk"`` (stack outputs); a value that is
    not a literal reads ``X``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.List) and node.elts:
            words = [e.value if isinstance(e, ast.Constant) else "X" for e in node.elts]
            if words[0] == "tdk":
                found.append([str(w) for w in words[1:]])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in re.finditer(r"\btdk ((?:[\w.:/{}$@=<>-]+ ?)+)", node.value):
                found.append(match.group(1).split())
    return found


def test_nothing_the_kit_says_uses_an_old_spelling(warned: list[str]) -> None:
    """Hints, next steps and stack outputs use the new spellings: every ``tdk`` command in the
    kit's sources is what modernize leaves alone."""
    sources = [*ROOT.glob("cli/*.py"), *ROOT.glob("infra/**/*.py"), *ROOT.glob("packager/**/*.py")]
    seen, old = 0, []
    for path in sources:
        if path == ROOT / "cli" / "main.py":
            continue  # the table of old spellings itself
        for args in _emitted_commands(path):
            seen += 1
            if modernize(args) != args:
                old.append((path.relative_to(ROOT).as_posix(), " ".join(args)))
    assert old == [] and seen > 50, old


def test_the_docs_use_no_old_spelling(warned: list[str]) -> None:
    """Every `tdk` command the docs show is what modernize leaves alone."""
    from tests.docs.doc_blocks import commands, doc_files, tdk_lines

    old = [
        (where, args)
        for path in doc_files()
        for where, line in tdk_lines(path)
        for args in commands(line)
        if modernize(args) != args
    ]
    assert old == [] and warned == []


def test_a_deprecated_spelling_runs_the_command(tmp_path: Path) -> None:
    """End to end: `tdk local down --name x` still works, warning on stderr."""
    result = CliRunner().invoke(
        app, ["local", "down", "--name", "nothing-here"], env={"TDK_STATE_DIR": str(tmp_path)}
    )
    assert result.exit_code == 0, result.output
    assert "--name is now --endpoint" in result.stderr and "deprecated" in result.stderr


def test_bench_and_tune_sweep_the_same_default_concurrency() -> None:
    """One default per option: `--concurrency` sweeps the same levels in bench and tune."""
    from cli.bench import DEFAULT_LEVELS
    from infra.perf.bench.loadgen import DEFAULT_CONCURRENCY
    from infra.perf.bench.measure import Load
    from infra.perf.tune.search import Settings

    assert Load().concurrency == Settings(1.0).concurrency == DEFAULT_CONCURRENCY
    assert ",".join(map(str, DEFAULT_CONCURRENCY)) == DEFAULT_LEVELS
    top: Any = typer.main.get_command(app)
    helps = [
        next(p.help for p in command.params if "--concurrency" in p.opts)
        for command in (top.commands["bench"].commands["tensors"], top.commands["tune"])
    ]
    assert all(f"[{DEFAULT_LEVELS}]" in (h or "") for h in helps), helps


def test_the_list_covers_every_deprecated_stack_key() -> None:
    assert DEPRECATED_KEYS == OLD_STACK_KEYS


def test_no_doc_or_committed_stack_uses_an_old_stack_key() -> None:
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *ROOT.glob("Pulumi.*.yaml")]
    used = [(f.name, old) for f in files for old in OLD_STACK_KEYS if old in f.read_text()]
    assert used == []


@pytest.fixture
def old_key_stack(tmp_path: Path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    lines = [f"  triton-deploy-kit:{old}: a@example.com" for old in OLD_STACK_KEYS]
    (tmp_path / "Pulumi.x.yaml").write_text(
        "\n".join(["config:", "  triton-deploy-kit:target: eks", *lines, ""])
    )
    return tmp_path


def test_validate_and_doctor_warn_of_each_old_stack_key(
    old_key_stack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.validate import _warn_undeclared
    from infra.facts.doctor import _stack_keys

    _warn_undeclared(old_key_stack, "x")
    said = capsys.readouterr().err
    finding = _stack_keys(old_key_stack, "x")
    for old, new in OLD_STACK_KEYS.items():
        warning = f"triton-deploy-kit:{old} is deprecated: use triton-deploy-kit:{new}"
        assert warning in said and warning in str(finding)
    assert "not a key Pulumi.yaml declares" not in said + str(finding)


def _options() -> list[tuple[str, Any, Any]]:
    """(command path, option, its click context) for every visible option of every command."""
    from typer import _click as click

    found = []

    def walk(command: Any, path: str) -> None:
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}".strip())
        ctx = click.Context(command)
        for param in command.params:
            if param.opts[0].startswith("--") and not getattr(param, "hidden", False):
                found.append((path, param, ctx))

    walk(typer.main.get_command(app), "")
    return found


def test_an_option_reads_the_same_value_in_every_command() -> None:
    """One option name, one kind of value (row 6: `--project-dir` was TEXT here, PATH there);
    only --target's choices differ (validate and package offer the targets that deploy)."""
    seen: dict[str, dict[str, list[str]]] = {}
    for path, param, ctx in _options():
        shown = str(param.display_type_rich(ctx))
        seen.setdefault(param.opts[0], {}).setdefault(shown, []).append(path)
    differ = {opt: kinds for opt, kinds in seen.items() if len(kinds) > 1 and opt != "--target"}
    assert differ == {}
    assert list(seen["--project-dir"]) == ["PATH"]


#: a default the help writes itself (one that depends on something): "(default: X)"
_WRITTEN_DEFAULT = re.compile(r"\(default: [^)]+\)")


def test_defaults_are_written_one_way() -> None:
    """Row 6, "defaults written three ways": typer shows a literal default as `[default: X]`;
    one the help must say in words is `(default: X)`, and never both for one option."""
    odd = []
    for path, param, _ in _options():
        text = param.help or ""
        written = _WRITTEN_DEFAULT.findall(text)
        if re.search(r"\bdefault", _WRITTEN_DEFAULT.sub("", text), re.IGNORECASE):
            odd.append(f"{path} {param.opts[0]}: {text}")
        literal = param.default not in (None, "", False, ()) and param.show_default
        if written and literal:
            odd.append(f"{path} {param.opts[0]}: written and shown ({param.default!r})")
    assert odd == []
