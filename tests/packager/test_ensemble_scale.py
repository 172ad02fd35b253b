"""Ensemble checks stay linear and iterative (issue 18 item 9): a ladder of ensembles that each
use the one below twice, and a cycle 1,500 ensembles deep, through the CLI as a user runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

LEAF = """name: "{name}"
max_batch_size: 8
input {{ name: "x" data_type: TYPE_FP32 dims: 4 }}
output {{ name: "y" data_type: TYPE_FP32 dims: 4 }}
backend: "python"
"""
TWICE = """name: "{name}"
platform: "ensemble"
max_batch_size: 8
input {{ name: "x" data_type: TYPE_FP32 dims: 4 }}
output {{ name: "y" data_type: TYPE_FP32 dims: 4 }}
ensemble_scheduling {{
  step {{ model_name: "{child}" model_version: -1 input_map {{ key: "x" value: "x" }}
         output_map {{ key: "y" value: "mid" }} }}
  step {{ model_name: "{child}" model_version: -1 input_map {{ key: "x" value: "mid" }}
         output_map {{ key: "y" value: "y" }} }}
}}
"""


def _model(root: Path, name: str, config: str, code: bool = False) -> None:
    (root / name / "1").mkdir(parents=True)
    (root / name / "config.pbtxt").write_text(config)
    if code:
        (root / name / "1" / "model.py").write_text("class TritonPythonModel:\n    pass\n")


def ladder(root: Path, rungs: int) -> Path:
    """``m<k>`` runs ``m<k-1>`` twice, down to the Python model ``m0``: 2**rungs paths."""
    _model(root, "m0", LEAF.format(name="m0"), code=True)
    for k in range(1, rungs + 1):
        _model(root, f"m{k}", TWICE.format(name=f"m{k}", child=f"m{k - 1}"))
    return root


def cycle(root: Path, length: int) -> Path:
    """``c<k>`` runs ``c<k+1>``, and the last runs ``c0``."""
    for k in range(length):
        _model(root, f"c{k}", TWICE.format(name=f"c{k}", child=f"c{(k + 1) % length}"))
    return root


@pytest.mark.timeout(30)
def test_a_sixty_rung_ladder_validates_and_packages(tmp_path: Path) -> None:
    repo = ladder(tmp_path / "ladder", 60)
    checked = CliRunner().invoke(app, ["validate", str(repo)])
    assert checked.exit_code == 0, checked.output
    dest = tmp_path / "release"
    packaged = CliRunner().invoke(app, ["package", str(repo), "--release", f"file://{dest}"])
    assert packaged.exit_code == 0, packaged.output
    assert (dest / "repository" / "m60-0" / "config.pbtxt").is_file()


@pytest.mark.timeout(60)
def test_a_cycle_1500_deep_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    repo = cycle(tmp_path / "cycle", 1500)
    result = CliRunner().invoke(app, ["validate", str(repo)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.output.count("TDK416") == 1500
    assert (
        "contains itself: c0 -> c1 -> c2 -> c3 -> ... (1493 more) -> c1497 -> c1498 -> c1499 -> c0"
        in (result.output)
    )


def test_a_short_cycle_shows_its_whole_trail(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(cycle(tmp_path / "cycle", 3))])
    assert result.exit_code == 1
    assert "ensemble 'c1' contains itself: c1 -> c2 -> c0 -> c1" in result.output
