"""Installs are pinned (issue 45): every distribution the kit's environment needs is in a lock
file at the version installed, and pyproject.toml keeps ranges for users' own environments."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "dev.lock"
RUNTIME_LOCK = ROOT / "requirements" / "triton-runtime.lock"
EXTRAS = ("infra", "dev")  # what `make setup` installs (Makefile, $(VENV)/.installed)


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not name==version"
            out[_canon(name)] = version
    return out


def _closure(requirements: list[Requirement], extras: set[str]) -> set[str]:
    """The distributions installed for ``requirements`` (markers evaluated here), recursively."""
    seen: set[str] = set()
    todo = [(r, extras) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        markers = [{"extra": e} for e in wanted] or [{"extra": ""}]
        if req.marker and not any(req.marker.evaluate(m) for m in markers):
            continue
        name = _canon(req.name)
        if name in seen:
            continue
        seen.add(name)
        deps = metadata.requires(req.name) or []
        todo += [(Requirement(d), set(req.extras)) for d in deps]
    return seen


def test_every_dependency_of_the_dev_environment_is_locked_at_its_installed_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(d) for d in project["dependencies"]]
    wanted += [Requirement(d) for e in EXTRAS for d in project["optional-dependencies"][e]]
    locked = pins(LOCK)
    needed = _closure(wanted, set())
    missing = sorted(needed - set(locked))
    assert not missing, f"not in {LOCK.name}: {missing}; run `make lock`"
    wrong = {n: (locked[n], metadata.version(n)) for n in needed
             if metadata.version(n).split("+")[0] != locked[n]}  # fmt: skip
    assert not wrong, f"{LOCK.name} pins (lock, installed) {wrong}: run `make setup` or `make lock`"


def test_the_runtime_requirements_are_locked() -> None:
    req_file = ROOT / "infra" / "targets" / "local" / "runtime-requirements.txt"
    names = [Requirement(line).name for line in req_file.read_text().splitlines()
             if line.strip() and not line.startswith("#")]  # fmt: skip
    locked = pins(RUNTIME_LOCK)
    for name in names:
        assert _canon(name) in locked, f"{name} is not in {RUNTIME_LOCK.name}: run `make lock`"
        assert Requirement(
            next(line for line in req_file.read_text().splitlines() if line.startswith(name))
        ).specifier.contains(locked[_canon(name)]), f"{RUNTIME_LOCK.name} {name} out of range"


def test_users_get_ranges_not_pins() -> None:
    """pip installs the kit into a user's environment from pyproject.toml: ranges there, so the
    kit installs beside their other packages; only `make` applies the lock."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    exact = [d for d in project["dependencies"] if "==" in d]
    assert not exact, f"pyproject.toml pins {exact}: pin in requirements/dev.lock instead"
    makefile = (ROOT / "Makefile").read_text()
    assert makefile.count("-c $(LOCK)") >= 3 and "-c $(RUNTIME_LOCK)" in makefile
