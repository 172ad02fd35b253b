"""One rule table: every finding code has exactly one severity, the one ``RULES`` gives it.

The source is scanned (AST) so no check can choose a severity of its own again; the table
cannot be changed at run time; ``tdk package`` refuses duplicate names with validate's TDK105.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from packager.publish import load_models
from packager.repository import ModelDir
from packager.validate.findings import Sink, finding
from packager.validate.rules import RULES, Rule
from packager.validate.runner import validate_paths
from tdk.errors import ValidationFailed

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("packager", "infra", "cli", "tdk")
FINDINGS = ROOT / "packager" / "validate" / "findings.py"


def _calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            calls += [(path, node) for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return calls


CALLS = _calls()


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _where(path: Path, call: ast.Call) -> str:
    return f"{path.relative_to(ROOT)}:{call.lineno}"


def _first_str(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def test_no_check_chooses_its_own_severity() -> None:
    chosen = [
        _where(path, call)
        for path, call in CALLS
        if _name(call) in ("error", "warning") and (_first_str(call) or "").startswith("TDK")
    ]
    assert not chosen, f"use sink.report(code, ...): the table gives the severity: {chosen}"
    constructed = [
        _where(path, call)
        for path, call in CALLS
        if _name(call) == "Finding"
        and path != FINDINGS
        and {k.arg for k in call.keywords} & {"severity", "code"}
    ]
    assert not constructed, f"use findings.finding(code, ...) for a coded finding: {constructed}"


def test_every_reported_code_is_in_the_table() -> None:
    used: dict[str, str] = {}
    for path, call in CALLS:
        code = _first_str(call)
        if _name(call) in ("report", "finding") and code is not None:
            used[code] = _where(path, call)
    assert len(used) > 80, "the scan found too few report/finding calls"
    literals: dict[str, str] = {
        str(node.value): _where(path, call)
        for path, call in CALLS
        for node in ast.walk(call)
        if isinstance(node, ast.Constant) and re.fullmatch(r"TDK\d{3}", str(node.value))
    }
    unknown = {c: w for c, w in {**literals, **used}.items() if c not in RULES}
    assert not unknown, f"codes missing from packager/validate/rules.py: {unknown}"


def test_an_unknown_code_is_a_clear_error(tmp_path: Path) -> None:
    sink = Sink("m", tmp_path / "config.pbtxt")
    with pytest.raises(KeyError, match=r"TDK999.*not in the rule table"):
        sink.report("TDK999", "name", "message", "fix")
    with pytest.raises(KeyError, match=r"TDK998.*not in the rule table"):
        finding("TDK998", tmp_path, "name", "message", "fix")


@pytest.mark.parametrize("code", ["TDK113", "TDK116", "TDK905", "TDK908"])
def test_severity_comes_from_the_table(tmp_path: Path, code: str) -> None:
    sink = Sink("m", tmp_path / "config.pbtxt")
    sink.report(code, "name", "message", "fix")
    assert sink.found[0].severity == RULES[code].severity
    assert finding(code, tmp_path, "name", "m", "f").severity == RULES[code].severity


def test_the_table_cannot_be_changed() -> None:
    rule = Rule("TDK999", "x", "error", "x", "x", "x")
    with pytest.raises(TypeError):
        RULES["TDK999"] = rule  # type: ignore[index]
    with pytest.raises(TypeError):
        del RULES["TDK101"]  # type: ignore[attr-defined]
    assert not hasattr(RULES, "update")


def test_importing_the_target_checks_adds_no_rules() -> None:
    probe = (
        "from packager.validate.rules import RULES\n"
        "before = len(RULES)\n"
        "import infra.targets.checks, cli.validate\n"
        "print(before, len(RULES))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
        timeout=60,
    ).stdout.split()  # fmt: skip
    assert out[0] == out[1] == str(len(RULES)), out
    assert {f"TDK90{n}" for n in range(1, 9)} <= set(RULES)


def test_package_refuses_duplicate_names_with_validates_tdk105(
    sample_repo: Path, tmp_path: Path
) -> None:
    first = Path(shutil.copytree(sample_repo, tmp_path / "a"))
    second = tmp_path / "b"
    shutil.copytree(sample_repo / "tokenizer", second / "tokenizer")
    validated = [f for f in validate_paths([first, second]) if f.code == "TDK105"]
    assert len(validated) == 1
    with pytest.raises(ValidationFailed) as raised:
        load_models([first, second])
    assert validated[0].message in raised.value.message
    assert raised.value.message.startswith("TDK105 ")
    assert raised.value.hint.startswith(validated[0].fix)
    (refused,) = raised.value.findings
    assert (refused.code, refused.severity, refused.file, refused.message, refused.fix) == (
        "TDK105",
        "error",
        validated[0].file,
        validated[0].message,
        validated[0].fix,
    )


def test_load_models_accepts_distinct_names(sample_repo: Path) -> None:
    models = load_models([sample_repo])
    assert all(isinstance(m, ModelDir) for m in models)
    assert len({m.name for m in models}) == len(models)
