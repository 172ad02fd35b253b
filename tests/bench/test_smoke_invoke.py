"""bench/invoke.py and bench/local_down.py, each against a local endpoint of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import run_script

pytestmark = pytest.mark.e2e


def test_bench_invoke_runs(tmp_path: Path) -> None:
    run_script("invoke.py", tmp_path)


def test_bench_local_down_runs(tmp_path: Path) -> None:
    run_script("local_down.py", tmp_path)
