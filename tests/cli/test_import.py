"""`tdk import`: an ONNX file becomes a model directory with the config Triton would complete,
written whole or not at all; names are checked, nothing is replaced; Neuron artifacts are
refused with the reason and the way back to the source model."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.config import load_config
from tests.validate.helpers import onnx_model

runner = CliRunner()


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_onnx_becomes_a_valid_model_with_dynamic_batching(bert_onnx: Path, tmp_path: Path) -> None:
    out = tmp_path / "repo"
    result = runner.invoke(app, ["import", str(bert_onnx), "--name", "bert", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert _tree(out) == ["bert", "bert/1", "bert/1/model.onnx", "bert/config.pbtxt"]
    config = load_config(out / "bert" / "config.pbtxt")
    assert (config.name, config.backend, config.max_batch_size) == ("bert", "onnxruntime", 4)
    assert config.HasField("dynamic_batching") and not config.platform
    assert (out / "bert" / "1" / "model.onnx").read_bytes() == bert_onnx.read_bytes()
    checked = runner.invoke(app, ["validate", str(out)])
    assert checked.exit_code == 0 and "valid: no findings" in checked.output


def test_max_batch_size_is_written_as_asked(bert_onnx: Path, tmp_path: Path) -> None:
    args = ["import", str(bert_onnx), "--name", "b", "--out", str(tmp_path), "--json"]
    result = runner.invoke(app, [*args, "--max-batch-size", "32"])
    assert result.exit_code == 0, result.output
    assert "max_batch_size: 32" in json.loads(result.stdout)["config"]
    assert load_config(tmp_path / "b" / "config.pbtxt").max_batch_size == 32


def test_a_model_that_cannot_batch_is_imported_without_batching(tmp_path: Path) -> None:
    fixed = tmp_path / "fixed.onnx"
    fixed.write_bytes(onnx_model([("x", "FP32", [1, 4])], [("y", "FP32", [1, 4])]))
    result = runner.invoke(app, ["import", str(fixed), "--name", "f", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "cannot batch" in result.output
    assert load_config(tmp_path / "r" / "f" / "config.pbtxt").max_batch_size == 0
    asked = ["import", str(fixed), "--name", "g", "--out", str(tmp_path / "r")]
    refused = runner.invoke(app, [*asked, "--max-batch-size", "8"])
    assert refused.exit_code == 2 and "cannot batch" in refused.output
    assert not (tmp_path / "r" / "g").exists()


def test_an_existing_model_is_never_replaced(bert_onnx: Path, tmp_path: Path) -> None:
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "mine.txt").write_text("keep")
    result = runner.invoke(
        app, ["import", str(bert_onnx), "--name", "bert", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2 and "never replaces" in result.output
    assert _tree(tmp_path / "bert") == ["mine.txt"]


@pytest.mark.parametrize("name", ["my model", "../up", "-x", ""])
def test_names_follow_the_target_model_rules(bert_onnx: Path, tmp_path: Path, name: str) -> None:
    result = runner.invoke(app, ["import", str(bert_onnx), "--name", name, "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "--name" in result.output and _tree(tmp_path) == []


def test_a_broken_onnx_file_leaves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    out = tmp_path / "new" / "repo"
    result = runner.invoke(app, ["import", str(bad), "--name", "m", "--out", str(out)])
    assert result.exit_code == 1 and "cannot be read as an ONNX model" in result.output
    assert not (tmp_path / "new").exists()  # not even the directories made for it


def test_neff_files_are_refused_with_the_way_back(tmp_path: Path) -> None:
    neff = tmp_path / "model.neff"
    neff.write_bytes(b"\x00neff")
    result = runner.invoke(app, ["import", str(neff), "--name", "m", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "Inferentia" in result.output and "torch_neuronx.trace" in result.output
    assert not (tmp_path / "o").exists()


def test_a_torch_neuronx_trace_is_refused(tmp_path: Path) -> None:
    traced = tmp_path / "traced.pt"
    with zipfile.ZipFile(traced, "w") as archive:  # a TorchScript archive's layout
        archive.writestr("traced/data.pkl", b"")
        archive.writestr(
            "traced/code/__torch__.py",
            "def forward(self, x):\n  return ops.neuron.forward_v2([x], self.model)\n",
        )
    result = runner.invoke(
        app, ["import", str(traced), "--name", "m", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1 and "torch_neuronx" in result.output
    assert "Hugging Face directory" in result.output
