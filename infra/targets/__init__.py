"""Deployment targets, one module each; imported lazily so a stack loads only its own SDK."""

from __future__ import annotations

import importlib
from typing import Any

from infra.targets.base import Target

#: ``triton-deploy-kit:target`` value -> module whose ``TARGET`` attribute is the Target
MODULES: dict[str, str] = {
    "sagemaker": "infra.targets.sagemaker.target",
    "sagemaker-ic": "infra.targets.sagemaker_ic.target",
    "gke": "infra.targets.gke.target",
    "eks": "infra.targets.eks.target",
}


def load_target(name: str) -> Target[Any]:
    """The Target registered under ``name`` (a KeyError means the caller skipped validation)."""
    target: Target[Any] = importlib.import_module(MODULES[name]).TARGET
    return target
