"""Layout and name rules of `packager.validate`: each rule fails on a broken repository and
passes on its nearest valid variant."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from packager.validate.runner import Finding, validate_paths
from tdk.errors import UsageError

Edit = Callable[[str, Callable[[Any], object]], Path]


def only(findings: list[Finding], field: str) -> list[Finding]:
    return [f for f in findings if f.field.startswith(field)]


def test_sample_repository_is_valid(sample_repo: Path) -> None:
    assert validate_paths([sample_repo]) == []


def test_findings_name_file_field_problem_and_fix(repo: Path) -> None:
    (repo / "text_classifier" / "1" / "model.onnx").unlink()
    (finding,) = validate_paths([repo])
    assert finding.file == str(repo / "text_classifier" / "1" / "model.onnx")
    assert finding.field == "default_model_filename"
    assert finding.model == "text_classifier" and finding.severity == "error"
    assert "model.onnx" in finding.message and "put the model at" in finding.fix
    assert finding.to_dict()["fix"] == finding.fix


def test_missing_version_directory(repo: Path) -> None:
    (repo / "text_pipeline" / "1").rmdir()
    (finding,) = validate_paths([repo])
    assert finding.field == "version directories" and finding.model == "text_pipeline"


def test_any_numeric_version_directory_passes(repo: Path) -> None:
    (repo / "text_classifier" / "1").rename(repo / "text_classifier" / "7")
    assert validate_paths([repo]) == []


def test_non_numeric_directory_is_a_warning(repo: Path) -> None:
    (repo / "text_classifier" / "backup").mkdir()
    (repo / "text_classifier" / ".cache").mkdir()  # hidden: ignored
    (finding,) = validate_paths([repo])
    assert finding.severity == "warning" and "'backup'" in finding.message


def test_default_model_filename_is_honoured(repo: Path, edit_config: Edit) -> None:
    version = repo / "text_classifier" / "1"
    (version / "model.onnx").rename(version / "encoder.onnx")
    assert only(validate_paths([repo]), "default_model_filename")
    edit_config("text_classifier", lambda c: setattr(c, "default_model_filename", "encoder.onnx"))
    assert validate_paths([repo]) == []


def test_default_model_filename_pointing_nowhere(repo: Path, edit_config: Edit) -> None:
    edit_config("image_classifier", lambda c: setattr(c, "default_model_filename", "cnn.onnx"))
    (finding,) = validate_paths([repo])
    assert "'cnn.onnx'" in finding.message


@pytest.mark.parametrize("bad", ["../image_classifier/1/model.onnx", "/etc/passwd", ".."])
def test_default_model_filename_must_not_be_a_path(repo: Path, edit_config: Edit, bad: str) -> None:
    edit_config("text_classifier", lambda c: setattr(c, "default_model_filename", bad))
    (finding,) = validate_paths([repo])
    assert finding.field == "default_model_filename" and "is a path" in finding.message


def test_onnx_model_directory_form_passes(repo: Path) -> None:
    version = repo / "image_classifier" / "1"
    onnx_bytes = (version / "model.onnx").read_bytes()
    (version / "model.onnx").unlink()
    (version / "model.onnx").mkdir()
    (version / "model.onnx" / "model.onnx").write_bytes(onnx_bytes)
    assert validate_paths([repo]) == []


def test_unserved_version_without_file_is_a_warning(repo: Path) -> None:
    model = repo / "text_classifier"
    shutil.copytree(model / "1", model / "2")
    (model / "1" / "model.onnx").unlink()  # latest(1) serves only version 2
    (finding,) = validate_paths([repo])
    assert finding.severity == "warning" and "version 1" in finding.message


def _add_model(repo: Path, name: str, config: str, files: dict[str, bytes | None]) -> Path:
    model = repo / name
    model.mkdir()
    (model / "config.pbtxt").write_text(config)
    for rel, data in files.items():
        path = model / rel
        if data is None:
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return model


TF_CONFIG = """name: "tf" platform: "tensorflow_savedmodel" max_batch_size: 4
input { name: "x" data_type: TYPE_FP32 dims: [ 3 ] }
output { name: "y" data_type: TYPE_FP32 dims: [ 1 ] }"""


def test_savedmodel_must_be_a_directory(repo: Path) -> None:
    _add_model(repo, "tf", TF_CONFIG, {"1/model.savedmodel": b"not a directory"})
    (finding,) = validate_paths([repo])
    assert "directory 'model.savedmodel'" in finding.message


def test_savedmodel_directory_passes(repo: Path) -> None:
    _add_model(repo, "tf", TF_CONFIG, {"1/model.savedmodel/saved_model.pb": b"pb"})
    assert validate_paths([repo]) == []


@pytest.mark.parametrize(
    ("platform", "filename"),
    [("tensorrt_plan", "model.plan"), ("pytorch_libtorch", "model.pt")],
)
def test_each_platform_expects_its_file(repo: Path, platform: str, filename: str) -> None:
    config = TF_CONFIG.replace("tensorflow_savedmodel", platform).replace('"tf"', '"m"')
    model = _add_model(repo, "m", config, {"1/wrong.bin": b"x"})
    assert f"'{filename}'" in validate_paths([repo])[0].message
    (model / "1" / filename).write_bytes(b"x")
    assert validate_paths([repo]) == []


def test_version_policy_specific_needs_its_directories(repo: Path, edit_config: Edit) -> None:
    edit_config("image_classifier", lambda c: c.version_policy.specific.versions.append(2))
    (finding,) = validate_paths([repo])
    assert finding.field == "version_policy.specific.versions"
    edit_config("image_classifier", lambda c: c.version_policy.specific.versions.__setitem__(0, 1))
    assert validate_paths([repo]) == []


def test_directory_name_must_equal_config_name(repo: Path, edit_config: Edit) -> None:
    edit_config("image_classifier", lambda c: setattr(c, "name", "cnn"))
    (finding,) = validate_paths([repo])
    assert finding.field == "name" and "'cnn'" in finding.message
    edit_config("image_classifier", lambda c: c.ClearField("name"))  # unset: the directory name
    assert validate_paths([repo]) == []


@pytest.mark.parametrize("bad", ["-image", ".image", "image classifier", "imäge", "x" * 249])
def test_name_rules_reject(repo: Path, edit_config: Edit, bad: str) -> None:
    edit_config("image_classifier", lambda c: setattr(c, "name", bad))
    (repo / "image_classifier").rename(repo / bad)
    findings = only(validate_paths([repo]), "name")
    assert findings and all("TargetModel" in f.message for f in findings)


@pytest.mark.parametrize("good", ["image.classifier-v2_0", "_private", "x" * 248])
def test_name_rules_accept(repo: Path, edit_config: Edit, good: str) -> None:
    edit_config("image_classifier", lambda c: setattr(c, "name", good))
    (repo / "image_classifier").rename(repo / good)
    assert validate_paths([repo]) == []


def test_directory_without_config_is_reported(repo: Path) -> None:
    (repo / "stray" / "1").mkdir(parents=True)
    (repo / ".git").mkdir()  # hidden directories are not models
    (finding,) = validate_paths([repo])
    assert finding.field == "config.pbtxt" and finding.file == str(repo / "stray" / "config.pbtxt")


def test_model_directory_given_without_config(repo: Path) -> None:
    (repo / "tokenizer" / "config.pbtxt").unlink()
    (finding,) = validate_paths([repo / "tokenizer"])
    assert finding.model == "tokenizer" and "no config.pbtxt" in finding.message


def test_unparseable_config_is_a_finding_not_a_crash(repo: Path) -> None:
    (repo / "tokenizer" / "config.pbtxt").write_text('name: "tokenizer"\nmax_batch_size: [\n')
    findings = validate_paths([repo])
    assert (
        findings[0].field == "config.pbtxt"
        and "not a valid Triton ModelConfig" in findings[0].message
    )
    # the ensemble that needs it now reports the missing step model as well
    assert any(f.model == "text_pipeline" and "'tokenizer'" in f.message for f in findings)


def test_single_model_directory_is_accepted(repo: Path) -> None:
    assert validate_paths([repo / "image_classifier"]) == []


def _platform_only(config: Any, platform: str) -> None:
    config.ClearField("backend")
    config.platform = platform


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            lambda c: (c.ClearField("backend"), setattr(c, "default_model_filename", "w.bin")),
            "backend",
        ),
        (lambda c: setattr(c, "platform", "tensorrt_plan"), "backend"),
        (lambda c: _platform_only(c, "caffe2"), "platform"),
    ],
    ids=["no-backend", "platform-backend-mismatch", "unknown-platform"],
)
def test_backend_and_platform_rules(
    repo: Path, edit_config: Edit, change: Callable[[Any], object], field: str
) -> None:
    edit_config("image_classifier", change)
    assert only(validate_paths([repo]), field)


def test_backend_inferred_from_the_model_file_passes(repo: Path, edit_config: Edit) -> None:
    """Triton fills in `backend` from model.onnx in the first version directory."""
    edit_config("image_classifier", lambda c: c.ClearField("backend"))
    assert validate_paths([repo]) == []


def test_platform_alone_or_agreeing_with_backend_passes(repo: Path, edit_config: Edit) -> None:
    edit_config("image_classifier", lambda c: setattr(c, "platform", "onnxruntime_onnx"))
    edit_config("text_classifier", lambda c: _platform_only(c, "onnxruntime_onnx"))
    assert validate_paths([repo]) == []


def test_same_model_name_in_two_repositories(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(repo / "image_classifier", other / "image_classifier")
    (finding,) = validate_paths([repo, other])
    assert "also used by" in finding.message and finding.file.startswith(str(other))
    assert validate_paths([repo, repo / "image_classifier"]) == []  # the same directory twice


def test_missing_or_empty_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        validate_paths([tmp_path / "missing"])
    with pytest.raises(UsageError, match="empty repository"):
        validate_paths([tmp_path])
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        validate_paths([tmp_path / "file"])
