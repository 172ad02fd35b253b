"""Pulumi runs the program as ``main: infra/`` (``Pulumi.yaml``), so ``infra/`` is first on
``sys.path`` there: a package directly under it named like an installed or standard module
(``infra/sagemaker`` vs the SageMaker SDK) would be imported in that module's place."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_package_under_infra_shadows_an_installed_module() -> None:
    packages = sorted(p.name for p in (ROOT / "infra").iterdir() if (p / "__init__.py").is_file())
    assert "targets" in packages
    shadowing = [
        name
        for name in packages
        if name in sys.stdlib_module_names or importlib.util.find_spec(name) is not None
    ]
    assert shadowing == [], f"rename infra/{shadowing[0]}: it hides the module of that name"


def test_the_sagemaker_sdk_is_what_a_clash_would_hide() -> None:
    assert importlib.util.find_spec("sagemaker") is not None
