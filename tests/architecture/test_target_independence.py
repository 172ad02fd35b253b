"""Every built-in target is in the import-linter contract that keeps sibling targets apart
(``pyproject.toml``): a new target folder cannot slip out of it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]
SIBLINGS = "A target never imports a sibling target"


def test_the_sibling_contract_lists_every_builtin_target() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    found = [c for c in contracts if c["name"].startswith(SIBLINGS)]
    assert len(found) == 1 and found[0]["type"] == "independence"
    folders = {module.rsplit(".", 1)[0] for module in registry.builtin_modules()}
    assert set(found[0]["modules"]) == folders
