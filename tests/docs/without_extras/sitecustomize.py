"""Loaded first when this folder is on PYTHONPATH: makes the modules of the kit's optional
extras (``infra``, ``dev``) unimportable in the kit's own interpreter, as in a venv where
`make demo` installed only the kit (``pip install .``)."""

from __future__ import annotations

import os
import sys
from importlib.abc import MetaPathFinder

BLOCKED = set(os.environ.get("TDK_BLOCKED_MODULES", "").split(","))


class _Blocker(MetaPathFinder):
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (an optional extra)", name=name)


if os.environ.get("TDK_BLOCK_FOR") == sys.executable:  # never in Triton's own interpreter
    sys.meta_path.insert(0, _Blocker())
