"""Prometheus's own binaries for the tests: found on PATH, or a failure that names the fix."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SETUP_HINT = "run `make setup` (it installs the Debian package prometheus, with promtool)"


def binary(name: str) -> str:
    """The path of ``name`` (promtool, prometheus); fails the test, never skips it, if missing."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: {SETUP_HINT}", pytrace=False)
    return found


def promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``promtool`` with a deadline; its output is in the result."""
    command = [binary("promtool"), *(str(a) for a in args)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60)
