"""Run the ``tdk`` CLI with Pulumi and every cloud SDK unimportable (a test helper).

``python tests/cli/run_without_pulumi.py render k8s ...`` fails with ModuleNotFoundError if
the command imports ``pulumi``, any ``pulumi_*`` provider, ``boto3``, ``google.cloud`` or
``azure``: what the ``[infra]`` extra would not provide must never be needed to render
manifests.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

BLOCKED = ("pulumi", "boto3", "google.cloud", "azure")


class Blocker(importlib.abc.MetaPathFinder):
    """Refuses every blocked top-level package and its submodules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        provider = fullname.partition(".")[0].startswith("pulumi_")
        if provider or any(fullname == b or fullname.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"blocked import of {fullname}", name=fullname)
        return None


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.meta_path.insert(0, Blocker())
    from cli.main import app

    app(sys.argv[1:], prog_name="tdk")


if __name__ == "__main__":
    main()
