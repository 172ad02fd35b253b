"""A target's name is written once, in its own folder: the deploy contract (``Target.name``),
the operations client (``TargetClient.target``) and the cloud-name rules (``TARGET``) read it
from the entry (or from the one constant the entry reads), never repeat the literal."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from infra.targets import registry
from infra.targets.capabilities import Refused

ROOT = Path(__file__).resolve().parents[2]
DUMMY = "tests.targets.dummy.entry"
#: the names a target's own name is kept under (entry, deploy contract, client, cloud names)
NAME_FIELDS = frozenset({"name", "target", "TARGET", "TARGET_NAME"})


def _named_literals(source: str, value: str) -> list[int]:
    """Lines where a module- or class-level ``NAME_FIELDS`` member is set to ``value``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets, assigned = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, assigned = [node.target], node.value
        else:
            continue
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if names & NAME_FIELDS and isinstance(assigned, ast.Constant) and assigned.value == value:
            found.append(node.lineno)
    return found


def _stated(module: str) -> tuple[str, list[str]]:
    entry = importlib.import_module(module).ENTRY
    folder = ROOT.joinpath(*module.split(".")[:-1])
    places = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(folder.glob("*.py"))
        for line in _named_literals(path.read_text(encoding="utf-8"), entry.name)
    ]
    return entry.name, places


@pytest.mark.parametrize("module", [*registry.builtin_modules(), DUMMY])
def test_each_target_folder_states_its_name_once(module: str) -> None:
    name, places = _stated(module)
    assert len(places) == 1, f"{name!r} is written at {places}: read it from the entry"


@pytest.mark.parametrize("module", [*registry.builtin_modules(), DUMMY])
def test_the_deploy_contract_and_the_client_carry_the_entry_s_name(module: str) -> None:
    entry = importlib.import_module(module).ENTRY
    client = importlib.import_module(entry.client_module)
    classes = [c for c in vars(client).values() if isinstance(c, type) and "target" in vars(c)]
    assert [c.target for c in classes] == [entry.name]
    if not isinstance(entry.deploy, Refused):
        assert "name" not in vars(type(entry.deploy())), "the deploy contract is told its name"


def test_a_repeated_name_is_seen() -> None:
    source = 'TARGET = "gke"\nclass A:\n    name: str = "gke"\n    other = "gke"\n'
    assert _named_literals(source, "gke") == [1, 3]
