"""The table of deployment targets: every registered ``TargetEntry``, found, not listed.

A target is a folder ``infra/targets/<name>/`` whose ``entry.py`` defines ``ENTRY``, an instance
of a ``infra.targets.entry.TargetEntry`` subclass: the registry discovers every such folder and
orders the entries by their ``order`` (the ``--target`` choices). Adding a target edits nothing
here. A plugin or a test adds one with a module path in ``TDK_EXTRA_TARGETS`` (after the
built-in ones, in the variable's order) or a ``register()`` call.

Importing this module is cheap: listing the targets imports each ``entry`` module only (no
cloud SDK and no Pulumi: an entry imports its target's heavier modules lazily).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from infra.targets.capabilities import DEPLOY, PLAN, VALIDATE, Refused
from infra.targets.entry import TargetEntry
from infra.targets.ports import ComparePort, PlanPort, ValidatePort
from tdk.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from infra.targets.base import Target

#: the package whose sub-packages with an ``entry`` module are the built-in targets
PACKAGE = "infra.targets"
#: comma-separated modules whose ``ENTRY`` adds a target (plugins, tests)
EXTRA_ENV = "TDK_EXTRA_TARGETS"
#: old ``--target`` spellings, accepted for one release with a warning: old -> (new, why)
DEPRECATED: Mapping[str, tuple[str, str]] = {
    "k8s": ("gke", "--target k8s is now --target gke or --target eks (both take --url)"),
}


# --- the registry -----------------------------------------------------------------------------
_lock = threading.Lock()
_registered: dict[str, TargetEntry] = {}
_loaded: dict[str, dict[str, TargetEntry]] = {}


def _load(module: str) -> TargetEntry:
    try:
        entry = importlib.import_module(module).ENTRY
    except Exception as exc:  # importing runs the module's code: any error may come out
        raise ConfigError(
            f"target module {module!r} cannot be loaded: {exc.__class__.__name__}: {exc}",
            hint=f"check {EXTRA_ENV} (comma-separated modules that define ENTRY)",
        ) from exc
    if not isinstance(entry, TargetEntry):
        raise ConfigError(
            f"{module}.ENTRY is not a TargetEntry",
            hint="subclass infra.targets.entry.TargetEntry",
        )
    return entry


def builtin_modules() -> list[str]:
    """The ``entry`` module of every built-in target, in ``order``: each sub-package of
    ``infra.targets`` with an ``entry`` module, which must define ``ENTRY`` (shared code, such as
    the Kubernetes layer ``infra.k8s``, lives outside this folder)."""
    package = importlib.import_module(PACKAGE)
    found: list[tuple[int, str, str]] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = f"{PACKAGE}.{info.name}.entry"
        if info.ispkg and importlib.util.find_spec(module) is not None:
            found.append((_load(module).order, info.name, module))
    return [module for _, _, module in sorted(found)]


def _table() -> dict[str, TargetEntry]:
    extra = os.environ.get(EXTRA_ENV, "")
    with _lock:
        table = _loaded.get(extra)
        if table is None:
            modules = [*builtin_modules(), *(m.strip() for m in extra.split(",") if m.strip())]
            table = {}
            for module in modules:
                entry = _load(module)
                if entry.name in table or entry.name in DEPRECATED:
                    raise ConfigError(
                        f"target {entry.name!r} ({module}) is registered twice",
                        hint=f"give the target in {module} another name",
                    )
                table[entry.name] = entry
            _loaded[extra] = table
        return {**table, **_registered}


def register(entry: TargetEntry) -> None:
    """Add a target at run time (a plugin's or a test's); its name must be new."""
    if entry.name in _table() or entry.name in DEPRECATED:
        raise ConfigError(f"target {entry.name!r} is registered twice", hint="pick a new name")
    with _lock:
        _registered[entry.name] = entry


def unregister(name: str) -> None:
    """Remove a target added with ``register`` (tests)."""
    with _lock:
        _registered.pop(name, None)


def entries() -> list[TargetEntry]:
    return list(_table().values())


def names() -> list[str]:
    """Every ``--target`` choice, in registry order."""
    return list(_table())


def get(name: str, option: str = "--target") -> TargetEntry:
    """The entry named ``name`` (a deprecated spelling warns through ``on_deprecated``)."""
    table = _table()
    if name in DEPRECATED:
        new, why = DEPRECATED[name]
        on_deprecated(why)
        name = new
    entry = table.get(name)
    if entry is None:
        raise UsageError(
            f"{option} {name!r} is not a target", hint=f"use one of {', '.join(table)}"
        )
    return entry


def refusal(entry: TargetEntry, what: str) -> UsageError:
    """The error for ``what`` ``entry`` cannot do: its reason, and the targets that can."""
    refused = entry.refused(what)
    reason = refused.reason if refused is not None else "not supported"
    return UsageError(
        f"the {entry.name} target cannot {what}: {reason}",
        hint=f"targets that can: {', '.join(able(what)) or 'none'}",
    )


def deploy_port(entry: TargetEntry) -> Target[Any]:
    """``entry``'s Pulumi program (its deploy contract); its refusal (with the targets that
    deploy) where it has none."""
    if isinstance(entry.deploy, Refused):
        raise refusal(entry, DEPLOY)
    return entry.deploy()


def plan_port(entry: TargetEntry) -> PlanPort:
    """``entry``'s plan port; its refusal (with the targets that plan) where it has none."""
    if isinstance(entry.plan, Refused):
        raise refusal(entry, PLAN)
    return entry.plan


def validate_port(entry: TargetEntry) -> ValidatePort:
    """``entry``'s validate port; its refusal (with the targets that can) where it has none."""
    if isinstance(entry.validate, Refused):
        raise refusal(entry, VALIDATE)
    return entry.validate


def compare_port() -> ComparePort:
    """The compare port of the registered target that has one (``tdk plan --components``)."""
    for entry in entries():
        if isinstance(entry.compare, ComparePort):
            return entry.compare
    raise UsageError(
        "no registered target serves model copies in units of their own: --components has "
        "nothing to compare",
        hint="drop --components",
    )


def able(what: str) -> list[str]:
    """The targets that can ``what`` (deploy, plan, validate)."""
    return [e.name for e in entries() if e.refused(what) is None]


def _warn(message: str) -> None:
    import sys

    print(f"warning: {message} (deprecated; the old spelling goes in the next release)",
          file=sys.stderr)  # fmt: skip


#: how a deprecation is told (a warning on stderr; tests may capture it)
on_deprecated: Callable[[str], None] = _warn
