"""A target's name is written once, as its entry's ``name`` (issue 50 item 5): nothing else in
its folder restates it, under any name, or imports the entry to read it. The deploy contract
reads it from the stack config it is given (``config.common.target``, which the registry fills
from the entry), the locator is told it by ``Locator.build`` and tells the client it builds, and
the cloud-name rules carry none."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from infra.targets import registry
from infra.targets.capabilities import Refused
from infra.targets.deployment import locator

ROOT = Path(__file__).resolve().parents[2]
DUMMY = "tests.targets.dummy.entry"
MODULES = [*registry.builtin_modules(), DUMMY]
#: constants whose value only happens to equal a target's name: (file, variable) -> what it is
COINCIDENT = {
    ("infra/targets/sagemaker/scaling.py", "SERVICE_NAMESPACE"): "Application Auto Scaling's "
    "service namespace for SageMaker resources (ServiceNamespace), the AWS API's word",
}


def _assigned_literals(source: str, value: str, path: str = "") -> list[int]:
    """Lines where any name is assigned the literal ``value`` (module, class or function), but
    a ``COINCIDENT`` constant of ``path``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        else:
            continue
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if any((path, name) in COINCIDENT for name in names):
            continue
        if isinstance(node.value, ast.Constant) and node.value.value == value:
            found.append(node.lineno)
    return found


def _imports(source: str) -> set[str]:
    """Every module ``source`` imports from (``from X import ...``, ``import X``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _folder(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")[:-1])


@pytest.mark.parametrize("module", MODULES)
def test_each_target_folder_states_its_name_once_in_its_entry(module: str) -> None:
    entry = importlib.import_module(module).ENTRY
    places = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(_folder(module).glob("*.py"))
        for line in _assigned_literals(
            path.read_text(encoding="utf-8"), entry.name, str(path.relative_to(ROOT))
        )
    ]
    assert places == [f"{_folder(module).relative_to(ROOT)}/entry.py:{_line(module)}"], (
        f"{entry.name!r} is written at {places}: only the entry states it"
    )


def _line(module: str) -> int:
    source = (_folder(module) / "entry.py").read_text(encoding="utf-8")
    name = importlib.import_module(module).ENTRY.name
    [line] = _assigned_literals(source, name)
    return line


@pytest.mark.parametrize("module", MODULES)
def test_no_module_of_a_target_reads_its_name_from_the_entry(module: str) -> None:
    """The entry references the target's modules (``Lazy``); they never import it back."""
    readers = [
        path.name
        for path in sorted(_folder(module).glob("*.py"))
        if path.name != "entry.py" and module in _imports(path.read_text(encoding="utf-8"))
    ]
    assert readers == [], f"{readers} import {module}: take the name from what they are told"


@pytest.mark.parametrize("module", MODULES)
def test_the_deploy_contract_and_the_client_are_told_the_entry_s_name(module: str) -> None:
    entry = importlib.import_module(module).ENTRY
    if not isinstance(entry.deploy, Refused):
        assert "name" not in vars(type(entry.deploy())), "the deploy contract restates its name"
    kind = entry.locator()
    assert "target" not in vars(kind), "the locator restates its target's name"
    if module != DUMMY:  # the dummy is registered only where a test asks (TDK_EXTRA_TARGETS)
        assert locator(entry.name, {}).target == entry.name


def test_a_repeated_name_is_seen() -> None:
    source = 'TARGET = "gke"\nclass A:\n    name: str = "gke"\n    other = "gke"\n'
    assert _assigned_literals(source, "gke") == [1, 3, 4]
    assert "infra.targets.gke.entry" in _imports("from infra.targets.gke.entry import ENTRY\n")
