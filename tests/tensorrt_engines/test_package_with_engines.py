"""`tdk package --stack`: an ONNX model with a cached plan for the stack's GPU is served by the
plan (named per compute capability, Triton's cc_model_filenames), and the manifest records
what it was built for, which `tdk validate` then checks against each target."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from packager.config import load_config
from packager.stores import open_store
from packager.tensorrt.engines import store_engine
from tests.tensorrt_engines.helpers import fake_plan, model_dir, planned, record_for

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _package(repo: Path, release: Path, *extra: str) -> str:
    result = runner.invoke(
        app, ["package", str(repo), "--release", f"file://{release}", "--project-dir", str(ROOT),
              *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def _validate(repo: Path, *args: str) -> tuple[int, list[str], str]:
    result = runner.invoke(
        app, ["validate", str(repo), *args, "--project-dir", str(ROOT), "--format", "json"]
    )
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, [f["code"] for f in json.loads(result.stdout)], result.stdout


def test_the_stacks_plan_replaces_the_onnx_model_and_is_recorded(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    release = tmp_path / "release"
    store = open_store(f"file://{release}")
    plan = fake_plan()
    store_engine(store, record_for(planned(model), plan), plan)  # built for gke-dev's L4

    output = _package(model.parent, release, "--stack", "gke-dev")
    assert "served by its TensorRT engine" in output
    manifest = json.loads((release / "manifest.json").read_text())
    [entry] = manifest["models"]
    assert entry["built_for"] == manifest["trt_built_for"] == "8.9:10.16@26.04"
    assert entry["platform"] == "tensorrt_plan"
    assert "bert-0/1/model_cc8.9.plan" in entry["files"]
    assert not any(name.endswith("model.onnx") for name in entry["files"])
    served = release / "repository" / "bert-0"
    assert (served / "1" / "model_cc8.9.plan").read_bytes() == plan
    config = load_config(served / "config.pbtxt")
    assert dict(config.cc_model_filenames) == {"8.9": "model_cc8.9.plan"}
    assert (model / "1" / "model.onnx").is_file()  # the user's model is untouched

    # the release loads on the stack it was built for; an A10G (eks-dev, 8.6) cannot load it
    status, codes, _ = _validate(release / "repository", "--stack", "gke-dev",
                                 "--release", f"file://{release}")  # fmt: skip
    assert (status, codes) == (0, [])
    status, codes, out = _validate(release / "repository", "--stack", "eks-dev",
                                   "--release", f"file://{release}")  # fmt: skip
    assert (status, codes) == (1, ["TDK907"]) and "8.9" in out


def test_without_a_cached_plan_the_model_is_packaged_as_onnx(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    release = tmp_path / "release"
    output = _package(model.parent, release, "--stack", "eks-dev")
    assert "no cached TensorRT engine" in output
    [entry] = json.loads((release / "manifest.json").read_text())["models"]
    assert entry["built_for"] == "" and entry["backend"] == "onnxruntime"


def test_a_target_from_flags_takes_the_plan_for_its_gpu(tmp_path: Path) -> None:
    """`tdk package --target gke --gpu nvidia-l4` picks the plan a stack of that GPU would (the
    stack is built from the flags as `tdk validate --target` builds it); an A10G target does
    not, and says which `tdk build` makes one."""
    model = model_dir(tmp_path)
    release = tmp_path / "release"
    plan = fake_plan()
    store_engine(open_store(f"file://{release}"), record_for(planned(model), plan), plan)  # L4

    a10g = _package(model.parent, tmp_path / "other", "--release", f"file://{release}",
                    "--target", "sagemaker", "--instance-type", "ml.g5.xlarge")  # fmt: skip
    assert "no cached TensorRT engine fits A10G" in a10g
    output = _package(model.parent, release, "--target", "gke", "--gpu", "nvidia-l4")
    assert "served by its TensorRT engine for L4" in output
    [entry] = json.loads((release / "manifest.json").read_text())["models"]
    assert entry["built_for"] == "8.9:10.16@26.04" and entry["platform"] == "tensorrt_plan"


def test_stack_and_target_flags_together_are_refused(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    rows = {
        "names the target, instance type, GPU and image": ["--stack", "gke-dev", "--target", "gke"],
        "say where a --target serves": ["--gpu", "nvidia-l4"],
    }
    for said, extra in rows.items():
        result = runner.invoke(
            app, ["package", str(model.parent), "--release", f"file://{tmp_path}/r", *extra]
        )
        assert result.exit_code == 2, result.output
        assert said in " ".join(result.output.split()) and not (tmp_path / "r").exists()
