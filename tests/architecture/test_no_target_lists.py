"""Tests read their lists of targets from the registry (``tests/registry_lists.py``): a
hand-written list such as ``["gke", "eks"]`` leaves a new target silently untested (issue 39
item 6). The exceptions: the registry's own test, which pins the registered order, and this
file's examples."""

from __future__ import annotations

import re
from pathlib import Path

from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {
    "tests/architecture/test_target_registry.py",
    "tests/architecture/test_no_target_lists.py",
}


def _pattern() -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in sorted(registry.names(), key=len, reverse=True))
    quoted = rf"""['"](?:{names})['"]"""
    return re.compile(rf"[\[({{]\s*(?:{quoted}\s*,\s*)+{quoted}\s*,?\s*[\])}}]")


def _hand_written() -> list[str]:
    pattern, found = _pattern(), []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    return found


def test_no_hand_written_list_of_targets_in_tests() -> None:
    assert _hand_written() == []


def test_the_scan_finds_a_hand_written_list() -> None:
    pattern = _pattern()
    assert pattern.search('@pytest.mark.parametrize("target", ["gke", "eks"])')
    assert pattern.search("for target in ('eks', 'sagemaker-ic'):")
    assert not pattern.search('args = ["--target", "gke", "--url", url]')
    assert not pattern.search('@pytest.mark.parametrize("target", kubernetes_targets())')
