"""`tdk validate --target/--stack`: deploy-target checks through the CLI, and the one table of
target facts that infra's own instance and accelerator tables must agree with."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws.sagemaker import instances as sagemaker
from infra.clouds.gcp import catalog as gcp_catalog
from infra.facts import hardware as facts
from infra.targets.eks import builders as eks
from infra.targets.gke import builders as gke
from tests.validate.helpers import PYTHON_MODEL, make_repo

ROOT = Path(__file__).resolve().parents[2]


def codes(*args: str) -> tuple[int, list[dict[str, Any]]]:
    result = CliRunner().invoke(app, ["validate", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _python_model(tmp_path: Path, count: int) -> Path:
    config = f"""name: "py"
backend: "python"
max_batch_size: 0
input [ {{ name: "IN" data_type: TYPE_FP32 dims: [ -1 ] }} ]
output [ {{ name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] }} ]
instance_group [ {{ kind: KIND_CPU count: {count} }} ]
"""
    return make_repo(tmp_path / f"repo{count}", {"py": (config, {"1/model.py": PYTHON_MODEL})})


def test_sample_repository_passes_every_target(sample_repo: Path) -> None:
    for args in (
        ["--target", "sagemaker", "--instance-type", "ml.g5.xlarge"],
        ["--target", "gke", "--gpu", "nvidia-l4"],
        ["--target", "eks", "--instance-type", "g5.xlarge"],
        ["--stack", str(ROOT / "Pulumi.sagemaker-dev.yaml")],
        ["--stack", str(ROOT / "Pulumi.gke-dev.yaml")],
        ["--stack", str(ROOT / "Pulumi.eks-dev.yaml")],
    ):
        status, findings = codes(str(sample_repo), *args)
        assert status == 0 and findings == [], (args, findings)


def test_tensorrt_on_a_cpu_instance_is_refused(sample_repo: Path, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(sample_repo, tmp_path / "repo"))
    config = repo / "image_classifier" / "config.pbtxt"
    config.write_text(
        config.read_text().replace('backend: "onnxruntime"', 'platform: "tensorrt_plan"')
    )
    (repo / "image_classifier" / "1" / "model.onnx").rename(
        repo / "image_classifier" / "1" / "model.plan"
    )
    status, findings = codes(
        str(repo / "image_classifier"), "--target", "sagemaker", "--instance-type", "ml.c5.xlarge"
    )
    assert status == 1 and {f["code"] for f in findings} == {"TDK901"}
    status, findings = codes(
        str(repo / "image_classifier"), "--target", "sagemaker", "--instance-type",
        "ml.g5.xlarge", "--image", "25.09",
    )  # fmt: skip
    # nothing says what the plan was built for: Triton may not load it (an error since #35)
    assert status == 1 and [f["code"] for f in findings] == ["TDK906"]
    assert "A10G" in findings[0]["message"] and "8.6" in findings[0]["message"]


def test_unknown_backend_is_refused(tmp_path: Path) -> None:
    config = 'name: "m"\nbackend: "tensorflow"\nmax_batch_size: 0\n'
    repo = make_repo(tmp_path / "r", {"m": (config, {"1/model.savedmodel/x": "x"})})
    status, findings = codes(str(repo), "--target", "eks", "--instance-type", "g5.xlarge")
    assert status == 1 and "TDK901" in {f["code"] for f in findings}


def test_an_engine_backend_is_in_its_image_flavour(tmp_path: Path) -> None:
    """vLLM runs on the -vllm-python-py3 flavour the kit renders: not TDK901 (it was, when the
    check read the base image's backends)."""
    config = 'name: "m"\nbackend: "vllm"\nmax_batch_size: 0\n'
    repo = make_repo(tmp_path / "r", {"m": (config, {"1/model.json": '{"model": "/w"}'})})
    status, findings = codes(str(repo), "--target", "eks", "--instance-type", "g5.xlarge")
    assert status == 0 and "TDK901" not in {f["code"] for f in findings}


def test_python_shared_memory_on_sagemaker(tmp_path: Path) -> None:
    status, findings = codes(
        str(_python_model(tmp_path, 5)), "--target", "sagemaker", "--instance-type", "ml.g5.xlarge"
    )
    assert status == 1 and [f["code"] for f in findings] == ["TDK903"]
    assert "80 MiB" in findings[0]["message"] and "64 MiB" in findings[0]["message"]
    status, findings = codes(
        str(_python_model(tmp_path, 4)), "--target", "sagemaker", "--instance-type", "ml.g5.xlarge"
    )
    assert status == 0 and findings == []
    # GKE/EKS pods are not the SageMaker container: no 64 MiB limit there
    status, _ = codes(str(tmp_path / "repo5"), "--target", "gke", "--gpu", "nvidia-l4")
    assert status == 0


def test_working_set_and_gpu_memory(tmp_path: Path) -> None:
    big = make_repo(
        tmp_path / "big",
        {
            "big": (
                'name: "big"\nbackend: "python"\nmax_batch_size: 0\n',
                {"1/model.py": PYTHON_MODEL},
            )
        },
    )
    weights = big / "big" / "1" / "weights.bin"
    with weights.open("wb") as handle:  # sparse: 7 GiB on a 16 GiB T4 -> 2 copies fit
        handle.truncate(7 * facts.GIB)
    result = CliRunner().invoke(
        app,
        [
            "validate",
            str(big),
            "--target",
            "sagemaker",
            "--instance-type",
            "ml.g4dn.xlarge",
            "--copies",
            "3",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0
    assert [f["code"] for f in json.loads(result.stdout)] == ["TDK905"]
    assert "2 in GPU memory" in result.stderr
    with weights.open("wb") as handle:
        handle.truncate(17 * facts.GIB)
    status, findings = codes(str(big), "--target", "sagemaker", "--instance-type", "ml.g4dn.xlarge")
    assert status == 1 and {f["code"] for f in findings} == {"TDK904"}


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--target", "azure"], "azure"),
        (["--target", "sagemaker", "--gpu", "nvidia-l4"], "--target sagemaker takes"),
        (["--stack", "gke-dev", "--gpu", "nvidia-t4"], "--stack reads the instance type"),
        (["--stack", "/nonexistent/Pulumi.x.yaml"], "Pulumi.yaml does not exist"),
        (["--stack", "x", "--project-dir", "/nonexistent"], "Pulumi.yaml does not exist"),
        (["--stack", ""], "is not a stack name"),
        (["--stack", "../gke-dev"], "is not a stack name"),
        (["--target", "local"], "the local target cannot validate"),
    ],
)
def test_bad_target_options_are_usage_errors(sample_repo: Path, args: list[str], text: str) -> None:
    result = CliRunner().invoke(app, ["validate", str(sample_repo), *args])
    assert result.exit_code == 2 and text in result.output


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--target", "sagemaker", "--instance-type", "ml.g9.huge"], "ml.g9.huge"),
        (["--target", "gke", "--gpu", "nvidia-k80"], "nvidia-k80"),
        (["--target", "eks", "--instance-type", "g5.xlarge", "--image", "19.01"], "19.01"),
    ],
)
def test_values_the_stack_refuses_are_refusals(
    sample_repo: Path, args: list[str], text: str
) -> None:
    """A flag builds a stack; what its config parser refuses is a finding, exit 1."""
    status, findings = codes(str(sample_repo), *args)
    assert status == 1 and [f["code"] for f in findings] == ["TDK910"]
    assert text in findings[0]["message"] and findings[0]["fix"]


def test_infra_tables_agree_with_the_facts() -> None:
    for family, sizes in sagemaker.GPU_FAMILIES.items():
        assert sizes == aws_catalog.EC2_GPU_FAMILIES[family].gpus
    for family, description in eks.GPU_FAMILIES.items():
        gpu = facts.GPUS[aws_catalog.EC2_GPU_FAMILIES[family].gpu]
        stated = re.search(r"(\d+) GB", description)
        assert stated and int(stated.group(1)) == gpu.memory_gib, (family, description)
    for accelerator, offer in gke.ACCELERATORS.items():
        gpu = facts.GPUS[gcp_catalog.GKE_ACCELERATORS[accelerator]]
        stated = re.search(r"(\d+) GB", offer.why)
        assert stated and int(stated.group(1)) == gpu.memory_gib, (accelerator, offer.why)
    assert facts.image_version("nvcr.io/nvidia/tritonserver:24.09-py3") in facts.IMAGES


def _plan_repo(sample_repo: Path, tmp_path: Path) -> Path:
    repo = Path(
        shutil.copytree(sample_repo / "image_classifier", tmp_path / "repo" / "image_classifier")
    )
    config = repo / "config.pbtxt"
    config.write_text(
        config.read_text().replace('backend: "onnxruntime"', 'platform: "tensorrt_plan"')
    )
    (repo / "1" / "model.onnx").rename(repo / "1" / "model.plan")
    return repo.parent


def test_trt_built_for_is_recorded_by_package_and_checked(
    sample_repo: Path, tmp_path: Path
) -> None:
    repo = _plan_repo(sample_repo, tmp_path)
    release = f"file://{tmp_path / 'release'}"
    packaged = CliRunner().invoke(
        app, ["package", str(repo), "--release", release, "--trt-built-for", "8.6:10.13"]
    )
    assert packaged.exit_code == 0, packaged.output
    manifest = json.loads((tmp_path / "release" / "manifest.json").read_text())
    assert manifest["trt_built_for"] == "8.6:10.13"
    g5 = ["--target", "sagemaker", "--instance-type", "ml.g5.xlarge", "--release", release]
    assert codes(str(repo), *g5, "--image", "25.09") == (0, [])  # A10G 8.6; TensorRT 10.13
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    stack = (ROOT / "Pulumi.gke-dev.yaml").read_text()
    stack += "  triton-deploy-kit:k8sTritonImage: nvcr.io/nvidia/tritonserver:25.09-py3\n"
    (project / "Pulumi.gke-25.yaml").write_text(stack)
    status, findings = codes(
        str(repo), "--stack", "gke-25", "--project-dir", str(project), "--release", release
    )
    assert status == 1 and [f["code"] for f in findings] == ["TDK907"]  # the stack's L4 is 8.9
    assert "8.9" in findings[0]["message"] and "L4" in findings[0]["message"]
    status, findings = codes(
        str(repo), "--target", "gke", "--gpu", "nvidia-l4", "--image", "25.09",
        "--trt-built-for", "8.9:10.13",
    )  # fmt: skip
    assert (status, findings) == (0, [])


def test_trt_built_for_must_be_well_formed(sample_repo: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "package",
            str(sample_repo),
            "--release",
            f"file://{tmp_path / 'r'}",
            "--trt-built-for",
            "A10G",
        ],
    )
    assert result.exit_code == 2 and "8.6:10.13" in result.output
    assert not (tmp_path / "r").exists()


def test_files_larger_than_the_instance_disk(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "r",
        {
            "big": (
                'name: "big"\nbackend: "python"\nmax_batch_size: 0\n',
                {"1/model.py": PYTHON_MODEL},
            )
        },
    )
    with (repo / "big" / "1" / "weights.bin").open("wb") as handle:  # sparse, no real disk used
        handle.truncate(31 * 10**9)  # a CPU instance gets a 30 GB volume
    status, findings = codes(str(repo), "--target", "sagemaker", "--instance-type", "ml.c5.xlarge")
    assert status == 1 and [f["code"] for f in findings] == ["TDK902"]
    with (repo / "big" / "1" / "weights.bin").open("wb") as handle:
        handle.truncate(20 * 10**9)
    assert codes(str(repo), "--target", "sagemaker", "--instance-type", "ml.c5.xlarge") == (0, [])


def test_kind_gpu_on_a_cpu_instance(sample_repo: Path, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(sample_repo, tmp_path / "repo"))
    config = repo / "tokenizer" / "config.pbtxt"
    config.write_text(config.read_text().replace("KIND_CPU", "KIND_GPU"))
    status, findings = codes(str(repo), "--target", "sagemaker", "--instance-type", "ml.c5.xlarge")
    assert status == 1 and "TDK908" in {f["code"] for f in findings}
    # on a GPU target, KIND_GPU is right: no TDK908, and the local-endpoint caveat TDK213 is dropped
    assert codes(str(repo), "--target", "sagemaker", "--instance-type", "ml.g5.xlarge") == (0, [])
    status, findings = codes(str(repo))
    assert status == 0 and [f["code"] for f in findings] == ["TDK213"]


def test_backend_inferred_from_files_is_checked_against_the_image(
    sample_repo: Path, tmp_path: Path
) -> None:
    repo = Path(shutil.copytree(sample_repo, tmp_path / "repo"))
    config = repo / "image_classifier" / "config.pbtxt"
    config.write_text(config.read_text().replace('backend: "onnxruntime"', ""))
    assert codes(str(repo), "--target", "eks", "--instance-type", "g5.xlarge") == (0, [])
