"""`tdk build`: the Job `--render` writes for the gke and eks stacks (kubernetes-validate
--strict, the TensorRT image of the Triton image's release, the Triton pods' placement and
identity), the cache hit that builds nothing, and the refusals (no kubectl, no GPU here, a
target that runs no Jobs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from infra.facts.hardware import IMAGES
from infra.tensorrt_engines.stage import BuildTarget
from packager.stores import open_store
from packager.tensorrt.engines import store_engine
from tests.registry_lists import building_targets, dev_stack
from tests.tensorrt_engines.helpers import SEQ, fake_plan, model_dir, planned, record_for

ROOT = Path(__file__).resolve().parents[2]
K8S_VERSION = "1.33"  # as tests/cli/test_render.py pins it
SHAPES = [arg for shape in SEQ for arg in ("--shape", shape)]
runner = CliRunner()


def _build(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["build", *args, "--project-dir", str(ROOT)])
    return result.exit_code, result.output


def _render(tmp_path: Path, stack: str) -> tuple[dict, Path]:
    out = tmp_path / "job"
    code, output = _build(str(model_dir(tmp_path)), "--stack", stack, *SHAPES,
                          "--render", str(out), "--json")  # fmt: skip
    assert code == 0, output
    listing = json.loads(output)
    return listing, Path(listing["job"])


def _rendered(tmp_path: Path, stack: str) -> Path:
    out = tmp_path / "k8s"
    if not out.exists():
        result = runner.invoke(
            app, ["render", "k8s", "--stack", stack, "--out", str(out), "--project-dir", str(ROOT)]
        )
        assert result.exit_code == 0, result.output
    return out


def _triton_deployment(tmp_path: Path, stack: str) -> dict:
    [path] = _rendered(tmp_path, stack).glob("*-deployment-*.yaml")
    return yaml.safe_load(path.read_text())


def _service_accounts(tmp_path: Path, stack: str) -> set[str]:
    """The ServiceAccounts ``tdk render k8s`` declares for the stack."""
    docs = [yaml.safe_load(p.read_text()) for p in _rendered(tmp_path, stack).glob("*.yaml")]
    return {d["metadata"]["name"] for d in docs if d and d.get("kind") == "ServiceAccount"}


@pytest.mark.parametrize("stack", [dev_stack(t) for t in building_targets()])
def test_the_rendered_job_passes_strict_validation_and_runs_like_triton(
    tmp_path: Path, stack: str
) -> None:
    listing, path = _render(tmp_path, stack)
    tool = Path(sys.executable).with_name("kubernetes-validate")
    done = subprocess.run(
        [str(tool), "--strict", "-k", K8S_VERSION, "--no-warn", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "passed" in done.stdout, done.stdout + done.stderr
    job = yaml.safe_load(path.read_text())
    pod = job["spec"]["template"]["spec"]
    triton = _triton_deployment(tmp_path, stack)["spec"]["template"]["spec"]
    # the TensorRT container of the release the Triton image is built on (26.05 on 26.04)
    [triton_image] = [c["image"] for c in triton["containers"]]
    [build] = [c for c in pod["initContainers"] if c["name"] == "build"]
    release = triton_image.rsplit(":", 1)[1].split("-")[0]
    assert build["image"] == f"nvcr.io/nvidia/tensorrt:{IMAGES[release].base}-py3"
    assert (release, IMAGES[release].base) == ("26.05", "26.04")
    assert build["resources"]["limits"]["nvidia.com/gpu"] == "1"
    # the GPU pool the Triton pods run on, as the build's own ServiceAccount (issue 47 item 5:
    # its identity alone writes plans/), the one tdk render declares beside Triton's
    assert pod["nodeSelector"] == triton["nodeSelector"]
    assert pod["tolerations"] == triton["tolerations"]
    assert pod["serviceAccountName"] == f"{triton['serviceAccountName']}-build"
    assert pod["serviceAccountName"] in _service_accounts(tmp_path, stack)
    assert (
        job["metadata"]["namespace"] == _triton_deployment(tmp_path, stack)["metadata"]["namespace"]
    )
    # the upload names the cache entry; the Job never retries a failed build
    [upload] = pod["containers"]
    # (a URL for the AWS and Google CLIs, a blob name in its container for the Azure CLI)
    entry = "engines/" + listing["entry"].split("/engines/", 1)[1]
    assert entry + "plan.json" in " ".join(upload["command"])
    assert job["spec"]["backoffLimit"] == 0


def test_render_stages_the_parity_inputs_and_onnx_runtime_reference(tmp_path: Path) -> None:
    listing, _ = _render(tmp_path, "gke-dev")
    inputs = Path(listing["inputs"])
    spec = json.loads((inputs / "build.json").read_text())
    assert (
        "--optShapes='input_ids':32x64,'attention_mask':32x64,'token_type_ids':32x64"
        in (spec["build_args"])
    )
    assert spec["release"] == "26.04" and spec["key"] == listing["key"]
    with np.load(inputs / "reference.npz") as reference:
        assert reference["logits"].shape == (32, 2)
    ids = np.fromfile(inputs / "inputs" / "0.bin", dtype=np.int64)
    assert ids.size == 32 * 64 and set(np.unique(ids)) <= {0, 1}
    assert (inputs / "pod_build.py").read_text().startswith('"""Build a TensorRT engine')


def test_a_cached_key_builds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No kubectl, no GPU: the hit is answered from the store alone."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    model = model_dir(tmp_path)
    build = planned(model)
    store = open_store(f"file://{tmp_path / 'release'}")
    plan = fake_plan()
    store_engine(store, record_for(build, plan), plan)
    code, output = _build(str(model), "--stack", "gke-dev", *SHAPES,
                          "--store", store.url, "--json")  # fmt: skip
    assert code == 0, output
    report = json.loads(output)
    assert report["built"] is False and report["built_for"] == "8.9:10.16@26.04"


@pytest.mark.parametrize("stack", [dev_stack(t) for t in building_targets()])
def test_without_kubectl_the_build_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stack: str
) -> None:
    """Every Kubernetes stack gets as far as kubectl: its Job names the build's ServiceAccount,
    never a value only the deployed stack knows (the identity ARNs, client ids and the metrics
    URL are on the ServiceAccounts and the ScaledObject, which `pulumi up` applied), so no
    stack stops at 'the build Job needs the deployed stack's tritonRoleArn' any more."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    release = tmp_path / "release"
    code, output = _build(str(model_dir(tmp_path)), "--stack", stack, *SHAPES,
                          "--store", f"file://{release}")  # fmt: skip
    assert code == 2 and "deployed stack" not in output and "Traceback" not in output, output
    assert not release.exists()
    if "build without --store" in output:  # a Job that may write only its release's own cache
        return
    assert "kubectl" in output and "--render" in output, output


def test_local_without_a_gpu_refuses_naming_where_it_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    code, output = _build(str(model_dir(tmp_path)), "--stack", "gke-dev", *SHAPES, "--local",
                          "--store", f"file://{tmp_path / 'release'}")  # fmt: skip
    assert code == 2 and "trtexec" in output and "nvcr.io/nvidia/tensorrt" in output
    assert "--stack" in output


def test_local_checks_the_gpu_before_shapes_and_store_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 49 item 8: no --shape and an s3:// store without credentials; the first thing
    said is that this machine cannot build."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    code, output = _build(str(model_dir(tmp_path)), "--stack", "gke-dev", "--local",
                          "--store", "s3://no-such-bucket/cache")  # fmt: skip
    assert code == 2 and "trtexec" in output, output
    assert "--shape" not in output and "credential" not in output.lower()


def test_a_sagemaker_stack_cannot_run_the_build_job(tmp_path: Path) -> None:
    code, output = _build(str(model_dir(tmp_path)), "--stack", "sagemaker-dev", *SHAPES,
                          "--render", str(tmp_path / "out"))  # fmt: skip
    assert code == 2 and "sagemaker" in output and "docs/build.md" in output


def test_a_model_without_an_onnx_file_is_refused(tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    shutil.rmtree(model / "1")
    code, output = _build(str(model), "--stack", "gke-dev", *SHAPES, "--render",
                          str(tmp_path / "out"))  # fmt: skip
    assert code == 2 and "model.onnx" in output


def test_ampere_plus_cannot_target_a_turing_gpu(tmp_path: Path) -> None:
    from infra.tensorrt_engines.stage import BuildOptions, engine_build
    from tdk.errors import UsageError

    t4 = BuildTarget("nvidia-tesla-t4", "T4", (7, 5), "26.05", None)
    with pytest.raises(UsageError, match="Ampere"):
        engine_build(model_dir(tmp_path), t4, BuildOptions(SEQ, hardware="ampere+"))


def test_building_for_a_release_whose_base_is_assumed_says_so(tmp_path: Path) -> None:
    """26.10's base release is in no source read (build.py's upstream_container_version):
    tdk build builds in the 26.10 TensorRT container and warns that this is an assumption."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    for tag in ("26.10", "26.08"):
        stack = (ROOT / "Pulumi.eks-dev.yaml").read_text()
        stack += f"  triton-deploy-kit:k8sTritonImage: nvcr.io/nvidia/tritonserver:{tag}-py3\n"
        (project / f"Pulumi.pin-{tag}.yaml").write_text(stack)
    model = model_dir(tmp_path)
    results = {
        tag: runner.invoke(app, ["build", str(model), "--stack", f"pin-{tag}", *SHAPES,
                                 "--render", str(tmp_path / tag), "--project-dir", str(project)])
        for tag in ("26.10", "26.08")
    }  # fmt: skip
    assert all(r.exit_code == 0 for r in results.values()), results["26.10"].output
    warned = " ".join(results["26.10"].output.split())
    assert "built on the 26.10 release by assumption" in warned
    assert "TensorRT 26.10 container may not load" in warned
    assert "assumption" not in results["26.08"].output


def _bert_dir(bert_onnx: Path, tmp_path: Path) -> Path:
    """The BERT-shaped fixture (a 64-row position table) imported as a model directory."""
    out = tmp_path / "repo"
    args = ["import", str(bert_onnx), "--name", "bert", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    return out / "bert"


def _seq(low: int, opt: int, top: int) -> list[str]:
    names = ("input_ids", "attention_mask", "token_type_ids")
    return [a for n in names for a in ("--shape", f"{n}:{low},{opt},{top}")]


@pytest.mark.parametrize("shape", [(1, 600, 1024), (1, 32, 128)])
def test_a_shape_beyond_the_position_table_is_refused_and_renders_nothing(
    shape: tuple[int, int, int], bert_onnx: Path, tmp_path: Path
) -> None:
    """Issue 49 item 2: opt 600 gave an ONNX Runtime traceback and half a render folder; max
    128 with opt 32 passed, for a Job that would fail on the GPU."""
    out = tmp_path / "job"
    code, output = _build(str(_bert_dir(bert_onnx, tmp_path)), "--stack", "gke-dev",
                          *_seq(*shape), "--render", str(out))  # fmt: skip
    assert code == 2 and "at most 64" in output and "position_embeddings" in output, output
    assert "Traceback" not in output and not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["repo"]


def test_a_render_that_fails_leaves_no_folder(bert_onnx: Path, tmp_path: Path) -> None:
    out = tmp_path / "job"
    shapes = ["--shape", "input_ids:1,16,64", "--shape", "attention_mask:1,32,64",
              "--shape", "token_type_ids:1,16,64"]  # fmt: skip
    code, output = _build(str(_bert_dir(bert_onnx, tmp_path)), "--stack", "gke-dev", *shapes,
                          "--render", str(out))  # fmt: skip
    assert code == 2 and "ONNX Runtime cannot run" in output and "Traceback" not in output
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["repo"]
    ok = _build(str(tmp_path / "repo" / "bert"), "--stack", "gke-dev", *_seq(1, 16, 64),
                "--render", str(out))  # fmt: skip
    assert ok[0] == 0, ok[1]
    assert sorted(p.suffix for p in out.iterdir()) == ["", ".yaml"]


def test_render_refuses_a_store_on_this_machine(tmp_path: Path) -> None:
    """The Job it wrote could not read file:// from its pod (issue 47 item 7)."""
    out = tmp_path / "job"
    for store in (f"file://{tmp_path / 'release'}", str(tmp_path / "release")):
        code, output = _build(str(model_dir(tmp_path)), "--stack", "gke-dev", *SHAPES,
                              "--render", str(out), "--store", store)  # fmt: skip
        assert code == 2, output
        text = " ".join(output.split())
        assert "its pod cannot reach" in text and "s3://" in text and "--local" in text
        assert not out.exists() and not (tmp_path / "release").exists()
