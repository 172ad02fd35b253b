"""Deployment targets, one folder each, found by ``infra.targets.registry`` (each folder's
``entry.py``); a target's modules are imported lazily so a stack loads only its own SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # importing the package (the registry, the CLI's --target) stays cheap
    from infra.targets.base import Target


def load_target(name: str) -> Target[Any]:
    """The Pulumi program (deploy contract) of the registered target ``name``."""
    from infra.targets import registry

    return registry.deploy_port(registry.get(name))
