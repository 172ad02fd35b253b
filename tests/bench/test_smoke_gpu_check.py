"""bench/gpu_check.py in its CPU mode (about a minute: a file of its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import run_script

pytestmark = pytest.mark.e2e


def test_bench_gpu_check_runs_every_step_on_cpu(tmp_path: Path) -> None:
    run_script("gpu_check.py", tmp_path)
