"""An Azure role assignment is declared in one place (issue 50: one place per thing):
``workload_identity.role_assignment``, which every grant the kit makes goes through (a workload
identity's roles, the aks front registry's AcrPull for the kubelet); the stacks' assignments
themselves are checked in tests/targets/aks."""

from __future__ import annotations

import ast
from pathlib import Path

from infra.clouds.azure import workload_identity

ROOT = Path(__file__).resolve().parents[3]


def _declaring(path: Path) -> bool:
    """Whether ``path`` calls ``...RoleAssignment(...)``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if called == "RoleAssignment":
                return True
    return False


def test_only_role_assignment_declares_a_role_assignment() -> None:
    declaring = [p for p in sorted((ROOT / "infra").rglob("*.py")) if _declaring(p)]
    assert declaring == [Path(workload_identity.__file__).resolve()], (
        "declare an Azure role assignment with infra.clouds.azure.workload_identity."
        f"role_assignment, not in {[str(p.relative_to(ROOT)) for p in declaring]}"
    )
