"""Every benchmark script is listed, and the quick ones run (tests/bench/smoke.py says how)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bench.smoke import BOUNDS, LONG, ROOT, SCRIPTS, out_of_bounds, run_script

pytestmark = pytest.mark.e2e


def test_every_bench_script_is_listed() -> None:
    assert sorted(p.name for p in (ROOT / "bench").glob("*.py")) == sorted(SCRIPTS)
    assert sorted(BOUNDS) == sorted(SCRIPTS)
    for script, (_, keys) in SCRIPTS.items():
        assert set(BOUNDS[script]) <= keys, script  # every bounded figure is a promised one


@pytest.mark.parametrize(
    ("script", "report", "wrong"),
    [
        ("churn.py", {"errors": 1, "req_per_s": 5.0, "p99_s": 1.0, "vs_baseline_req_per_s": 0.47},
         "errors=1"),
        ("churn.py", {"errors": 0, "req_per_s": 5.0, "p99_s": 1.0, "vs_baseline_req_per_s": 4.7},
         "contradicts its sources"),
        ("package.py", {"ours_s": 1.0, "baseline_s": 2.0, "speedup": 2.0, "bytes_ratio": 1.0,
                        "republish_uploaded_bytes": 4096}, "republish_uploaded_bytes=4096"),
        ("tune.py", {**{k: 1.0 for k in BOUNDS["tune.py"]}, "repeat_noise": [0.1, float("nan")],
                     "speedup_rounds": [1.0]}, "repeat_noise="),
    ],
)  # fmt: skip
def test_out_of_bounds_figures_are_caught(script: str, report: dict[str, Any], wrong: str) -> None:
    assert any(wrong in line for line in out_of_bounds(script, report))


def test_the_long_runs_have_their_test_files() -> None:
    for script, name in LONG.items():
        text = (Path(__file__).parent / name).read_text()
        assert f'run_script("{script}"' in text, (script, name)


@pytest.mark.parametrize("script", sorted(set(SCRIPTS) - set(LONG)))
def test_bench_script_runs(script: str, tmp_path: Path) -> None:
    run_script(script, tmp_path)
