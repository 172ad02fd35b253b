"""``tdk plan --components``: inference components vs MME vs Inferentia for one measured load.

The unit sustains 300 rps within 50 ms; at safety 0.5 a copy (or an MME instance) is planned at
150 rps. The release has 20 tiny model copies: each IC copy reserves 1 GPU, 1 core and 1280 MB
(1024 MB Triton + 2x a few KB, rounded up to 256 MB steps); ml.g4dn.xlarge has 1 GPU, 4 vCPUs,
16 GiB (14745 MB usable at 0.9) and costs $0.7364/h in the test's price table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.local.local_helpers import make_release

PRICES = {
    "date": "2026-11-24",
    "sagemaker": {"us-east-1": {"ml.g4dn.xlarge": {"usd_per_hour": "0.7364", "source": "t"}}},
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, sample_repo: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plan")
    make_release(sample_repo, root / "release", copies=5)
    level = {"mode": "concurrency", "level": 4, "throughput_rps": 300, "p50_ms": 10,
             "p90_ms": 30, "p99_ms": 45, "errors": {}}  # fmt: skip
    bench = {"target": "sagemaker", "instance_type": "ml.g4dn.xlarge", "gpu": None,
             "target_model": "bert-0.tar.gz", "levels": [level]}  # fmt: skip
    (root / "bench.json").write_text(json.dumps(bench))
    (root / "prices.json").write_text(json.dumps(PRICES))
    return {
        "bench": root / "bench.json",
        "prices": root / "prices.json",
        "release": root / "release",
    }


def _rows(files: dict[str, Path], peak: str, *extra: str) -> dict[str, dict[str, Any]]:
    args = ["plan", str(files["bench"]), "--peak-rps", peak, "--latency-budget-ms", "50",
            "--prices",
            str(files["prices"]), "--instance-type", "ml.g4dn.xlarge", "--components",
            f"file://{files['release']}", "--baseline", "inf2.xlarge:2756rps:0.76"]  # fmt: skip
    args += extra
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["components_vs_mme"]
    return {row["option"].split(" ")[-1]: row for row in rows}


def test_many_small_models_mme_wins(files: dict[str, Path]) -> None:
    rows = _rows(files, "150")  # 20 models at 7.5 rps each: one copy, one GPU, each
    components, mme, baseline = rows["components"], rows["MME"], rows["(baseline)"]
    assert components["gpus_reserved"] == 20 and components["instances_peak"] == 20
    assert components["usd_per_hour_peak"] == "14.73"  # 20 x 0.7364
    assert components["usd_per_million"] == "27.2741"  # 14.728 / (150 x 3600) x 1e6
    assert mme["instances_peak"] == 1 and mme["usd_per_hour_peak"] == "0.74"
    assert mme["usd_per_million"] == "1.3637"
    assert baseline["instances_peak"] == 1 and baseline["usd_per_hour_peak"] == "0.76"


def test_one_hot_model_ties_at_peak_and_components_win_idle(files: dict[str, Path]) -> None:
    rows = _rows(files, "1200", "--hot-models", "1")  # 1200 / 150 = 8 copies or instances
    components, mme = rows["components"], rows["MME"]
    assert components["instances_peak"] == mme["instances_peak"] == 8
    assert components["usd_per_hour_peak"] == mme["usd_per_hour_peak"] == "5.89"
    assert components["instances_idle"] == 0 and components["usd_per_hour_idle"] == "0.00"
    assert mme["instances_idle"] == 1 and mme["usd_per_hour_idle"] == "0.74"
    assert "19 idle models scaled to zero" in components["note"]


def test_human_output_shows_the_comparison(files: dict[str, Path]) -> None:
    args = ["plan", str(files["bench"]), "--peak-rps", "150", "--latency-budget-ms", "50",
            "--prices",
            str(files["prices"]), "--instance-type", "ml.g4dn.xlarge",
            "--components", f"file://{files['release']}"]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "inference components vs MME" in result.output
    assert "ml.g4dn.xlarge MME" in result.output


def test_too_many_hot_models_is_a_usage_error(files: dict[str, Path]) -> None:
    args = ["plan", str(files["bench"]), "--peak-rps", "150", "--latency-budget-ms", "50",
            "--prices",
            str(files["prices"]), "--instance-type", "ml.g4dn.xlarge", "--components",
            f"file://{files['release']}", "--hot-models", "21", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert "--hot-models 21: expected 1..20" in result.output
