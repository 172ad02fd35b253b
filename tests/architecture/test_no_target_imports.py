"""Shared code reaches a target through the registry, never by importing its package: the
plan's ``--components`` comparison imported the sagemaker-ic entry from the CLI until the
entry's compare port (``registry.compare_port``) replaced it."""

from __future__ import annotations

import ast
from pathlib import Path

from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]
SHARED = ("cli", "infra", "packager", "tdk")
#: the local endpoint's own commands (``tdk local``, and ``tdk front serve``: the same front in
#: a Kubernetes pod, issue 46) drive its package: they are its CLI
ALLOWED = {("cli/local.py", "local"), ("cli/front.py", "local")}


def _target_packages() -> dict[str, str]:
    """Each registered target's package (``infra.targets.gke``) -> its name."""
    return {type(e).__module__.rsplit(".", 1)[0]: e.name for e in registry.entries()}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_shared_code_imports_no_targets_package() -> None:
    packages = _target_packages()
    owned = {ROOT / Path(*package.split(".")) for package in packages}
    found = []
    for top in SHARED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if any(path.is_relative_to(folder) for folder in owned):
                continue
            relative = path.relative_to(ROOT).as_posix()
            for module in _imports(path):
                for package, name in packages.items():
                    ours = module == package or module.startswith(package + ".")
                    if ours and (relative, name) not in ALLOWED:
                        found.append(f"{relative}: {module}")
    assert found == [], "ask the registry (infra.targets.registry) instead:\n" + "\n".join(found)
