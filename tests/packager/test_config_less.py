"""A model directory without config.pbtxt, as Triton sees it (issue 35, row 1): an ONNX model is
valid with the config its ONNX Runtime backend completes, which `tdk package` then ships; a
TensorRT plan is valid (a warning), and `tdk package` says what it needs instead of guessing."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.config import parse_config

runner = CliRunner()


@pytest.fixture
def bare(bert_onnx: Path, tmp_path: Path) -> Path:
    """A repository holding bert/1/model.onnx and nothing else."""
    model = tmp_path / "repo" / "bert"
    (model / "1").mkdir(parents=True)
    shutil.copyfile(bert_onnx, model / "1" / "model.onnx")
    return model


def test_validate_accepts_an_onnx_model_without_config(bare: Path) -> None:
    result = runner.invoke(app, ["validate", str(bare.parent), "--format", "json"])
    assert result.exit_code == 0, result.output
    [found] = json.loads(result.stdout)
    assert (found["code"], found["severity"]) == ("TDK117", "warning")
    assert "max_batch_size 4 with dynamic batching" in found["message"]


def test_show_config_prints_the_completed_config(bare: Path) -> None:
    result = runner.invoke(app, ["validate", str(bare), "--show-config"])
    assert result.exit_code == 0, result.output
    text = result.stdout[result.stdout.index("# ") :]
    config = parse_config("\n".join(line for line in text.splitlines()[1:]))
    assert config.max_batch_size == 4 and config.HasField("dynamic_batching")
    assert [t.name for t in config.input] == ["input_ids", "attention_mask", "token_type_ids"]
    refused = runner.invoke(app, ["validate", str(bare), "--show-config", "--format", "json"])
    assert refused.exit_code == 2 and "machine format" in refused.output


def test_a_broken_onnx_file_without_config_is_an_error(bare: Path) -> None:
    (bare / "1" / "model.onnx").write_bytes(b"not onnx")
    result = runner.invoke(app, ["validate", str(bare), "--format", "json"])
    assert result.exit_code == 1
    assert [f["code"] for f in json.loads(result.stdout)] == ["TDK501"]


def test_package_ships_the_completed_config_and_the_ranges(bare: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    result = runner.invoke(app, ["package", str(bare.parent), "--release", f"file://{store}"])
    assert result.exit_code == 0, result.output
    with tarfile.open(store / "mme" / "bert-0.tar.gz") as archive:
        member = archive.extractfile("bert-0/config.pbtxt")
        assert member is not None
        config = parse_config(member.read().decode())
    assert config.name == "bert-0" and config.max_batch_size == 4
    [model] = json.loads((store / "manifest.json").read_text())["models"]
    ranges = {spec["name"]: spec.get("range") for spec in model["inputs"]}
    assert ranges == {"input_ids": [0, 99], "attention_mask": [0, 1], "token_type_ids": [0, 1]}
    assert "range" not in model["outputs"][0]


def test_a_plan_without_config_validates_and_packages_as_triton_completes_it(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "repo" / "engine"
    (plan / "1").mkdir(parents=True)
    (plan / "1" / "model.plan").write_bytes(b"a serialized TensorRT engine")
    checked = runner.invoke(app, ["validate", str(plan.parent), "--format", "json"])
    assert checked.exit_code == 0, checked.output
    assert [f["code"] for f in json.loads(checked.stdout)] == ["TDK118"]
    store = tmp_path / "store"
    packaged = runner.invoke(app, ["package", str(plan.parent), "--release", f"file://{store}"])
    assert packaged.exit_code == 0, packaged.output
    assert "TensorRT engine without config.pbtxt" in packaged.output  # said, not refused
    [model] = json.loads((store / "manifest.json").read_text())["models"]
    assert (model["backend"], model["inputs"], model["outputs"]) == ("tensorrt", [], [])
    with tarfile.open(store / "mme" / "engine-0.tar.gz") as archive:
        member = archive.extractfile("engine-0/config.pbtxt")
        assert member is not None
        config = parse_config(member.read().decode())
    assert (config.backend, config.max_batch_size, len(config.input)) == ("tensorrt", 0, 0)
