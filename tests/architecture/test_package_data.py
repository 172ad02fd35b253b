"""Every data file the packages read ships with them: a ``pip install`` of the kit (what the
pre-commit hook does) must find them, not only a checkout."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tdk", "packager", "cli", "infra")


def test_every_data_file_is_declared_as_package_data() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]
    missing = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT)
            owner = ".".join(rel.parent.parts)
            if not any(fnmatch.fnmatch(path.name, g) for g in declared.get(owner, [])):
                missing.append(str(rel))
    assert missing == [], f"add to [tool.setuptools.package-data] in pyproject.toml: {missing}"
