"""Tests read their lists of targets from the registry (``tests/registry_lists.py``): a
hand-written list such as ``["gke", "eks"]`` or of their stacks ``["gke-dev", "eks-dev"]``
leaves a new target silently untested (issue 39 item 6). The exceptions: the registry's own
test, which pins the registered order, this file's examples, and ``PER_TARGET``: tests whose
list pins each target's own keys or behaviour, with why."""

from __future__ import annotations

import re
from pathlib import Path

from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {
    "tests/architecture/test_target_registry.py",
    "tests/architecture/test_no_target_lists.py",
}
#: path -> why its list names targets: each row's stacks need that target's own keys (a new
#: target is covered only once its keys are added there)
PER_TARGET = {
    "tests/infra/test_facts_today.py": "the two SageMaker targets' image and AMI keys",
    "tests/infra/test_k8s_models_key.py": "each stack's keys for a 2-GPU pod (KEYS)",
    "tests/infra/test_llm_render.py": "each stack's keys for a 2-GPU pod",
}


def _pattern() -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in sorted(registry.names(), key=len, reverse=True))
    quoted = rf"""['"](?:{names})(?:-dev)?['"]"""
    return re.compile(rf"[\[({{]\s*(?:{quoted}\s*,\s*)+{quoted}\s*,?\s*[\])}}]")


def _hand_written() -> list[str]:
    pattern, found = _pattern(), []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED or rel in PER_TARGET:
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
    assert pattern.search('@pytest.mark.parametrize("stack", ["gke-dev", "eks-dev"])')


def test_each_per_target_list_is_still_there() -> None:
    """An exception whose file lists no targets any more is lifted."""
    pattern = _pattern()
    for rel in PER_TARGET:
        assert pattern.search((ROOT / rel).read_text(encoding="utf-8")), rel
