"""Shared code asks the registered target; it never compares a target's name or keys a table
on it. The registry module and each target's own folder are the only places that may."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMES = "sagemaker|sagemaker-ic|gke|eks|local"
PATTERN = re.compile(
    rf"[=!]= *['\"]({NAMES})['\"]|['\"]({NAMES})['\"] *[=!]=|\{{ *['\"]({NAMES})['\"] *:"
)
ALLOWED = re.compile(r"^infra/targets/([a-z_]+/|registry\.py$|__init__\.py$)")


def _offending() -> list[str]:
    found = []
    for package in ("cli", "packager", "infra", "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if ALLOWED.match(rel):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if PATTERN.search(line):
                    found.append(f"{rel}:{number}: {line.strip()}")
    return found


def test_no_target_name_comparisons_outside_the_targets() -> None:
    assert _offending() == []


def test_the_scan_finds_a_comparison() -> None:
    assert PATTERN.search('    if target == "gke":')
    assert PATTERN.search('DEFAULT = {"sagemaker": "us-east-1"}')
    assert not PATTERN.search("    if target == other:")
