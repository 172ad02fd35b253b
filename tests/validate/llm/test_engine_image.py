"""One engine image decision (``infra.facts.llm.serving_image``): ``tdk validate
--target/--stack``, ``tdk render --models``, the Pulumi program and ``tdk doctor`` agree on the
image of every engine model in the corpus, and feasibility always sees the stack's models."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigReader
from infra.k8s.models import model_needs
from infra.targets import registry, stacks
from infra.targets.feasibility import feasible, flag_stack, require_feasible
from packager.publish import load_models
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import ROOT, run_stack, stack_config
from tests.local.local_helpers import make_release
from tests.registry_lists import dev_stack, kubernetes_targets, managed_targets
from tests.validate.llm import corpus as c

#: every engine model shape of the corpus, and the image flavour that carries it
CORPUS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "vllm": (c.vllm_repo, "-vllm-python-py3"),
    "llm-api": (c.llm_api_repo, "-trtllm-python-py3"),
    "trtllm-engine": (c.trtllm_repo, "-trtllm-python-py3"),
}


def _stack(name: str, overrides: dict[str, Any] | None = None) -> stacks.StackSettings:
    return stacks.settings(ConfigReader(stack_config(name, overrides).get), name)


@pytest.mark.parametrize("shape", sorted(CORPUS))
@pytest.mark.parametrize("stack", [dev_stack(t) for t in kubernetes_targets()])
def test_validate_render_and_the_program_pick_one_image(
    tmp_path: Path, stack: str, shape: str
) -> None:
    make, flavour = CORPUS[shape]
    repo = make(tmp_path / "repo")
    checked = feasible(_stack(stack), load_models([repo]))
    assert checked.ok, checked.first_refusal()
    assert checked.spec is not None
    settings = _stack(stack)
    fitted = settings.entry.deploy().fit_models(settings.config, model_needs([repo]))
    rendered = fitted.workload.image
    keyed = _stack(stack, {"k8sModels": str(repo)})
    declared = keyed.entry.deploy().offer(keyed.config).image_name
    gate = feasible(keyed)  # the program's and doctor's call: the stack's own models
    assert gate.ok and gate.spec is not None
    assert checked.spec.image_name == rendered == declared == gate.spec.image_name
    assert rendered.endswith(flavour)


@pytest.mark.parametrize("shape", sorted(CORPUS))
def test_validate_target_gke_takes_the_engine_flavour(tmp_path: Path, shape: str) -> None:
    """Was TDK901 "backend 'vllm' is not in the Triton 26.05 GPU image" for vLLM."""
    make, flavour = CORPUS[shape]
    models = load_models([make(tmp_path / "repo")])
    stack = flag_stack(registry.get("gke"), {"gpu": "nvidia-l4"}, models, ROOT)
    result = feasible(stack, models)
    assert result.ok, result.first_refusal()
    assert result.spec is not None and result.spec.image_name.endswith(flavour)


@pytest.mark.parametrize("shape", sorted(CORPUS))
@pytest.mark.parametrize("target", managed_targets())
def test_sagemaker_targets_refuse_engine_models_with_the_reason(
    tmp_path: Path, target: str, shape: str
) -> None:
    make, _ = CORPUS[shape]
    models = load_models([make(tmp_path / "repo")])
    stack = flag_stack(registry.get(target), {"instance_type": "ml.g5.xlarge"}, models, ROOT)
    refusal = feasible(stack, models).first_refusal()
    assert refusal is not None and refusal.code == "TDK916", refusal
    assert "-py3" in refusal.message and "gke" in refusal.fix


def _two_engines(root: Path) -> Path:
    """Two vLLM models at 0.6 of the GPU each: only the feasibility path refuses them."""
    repo = c.vllm_repo(root / "repo", args=dict(c.VLLM_ARGS, gpu_memory_utilization=0.6))
    c.vllm_repo(root / "more", args=dict(c.VLLM_ARGS, gpu_memory_utilization=0.6))
    (root / "more" / "vllm_model").rename(repo / "second")
    config = repo / "second" / "config.pbtxt"
    config.write_text('name: "second"\n' + config.read_text())
    return repo


def test_the_program_gate_sees_the_stacks_models(tmp_path: Path) -> None:
    """The gate of the Pulumi program must be given the ``k8sModels`` models."""
    repo = _two_engines(tmp_path)
    stack = _stack("gke-dev", {"k8sModels": str(repo)})
    assert [m.name for m in stack.models] == ["second", "vllm_model"]
    refusal = feasible(stack).first_refusal()
    assert refusal is not None and refusal.code == "TDK914"
    with pytest.raises(ConfigError, match="memory fractions"):
        require_feasible(stack)
    run = run_stack("gke-dev", {"k8sModels": str(repo)}, expect_error=True)
    assert isinstance(run.error, ConfigError) and "memory fractions" in str(run.error)


def test_doctor_judges_the_stack_with_its_models(tmp_path: Path) -> None:
    from cli.doctor import _feasibility

    repo = _two_engines(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    gke = (ROOT / "Pulumi.gke-dev.yaml").read_text()
    keyed = gke.replace("config:\n", f"config:\n  triton-deploy-kit:k8sModels: {repo}\n", 1)
    (project / "Pulumi.gke-dev.yaml").write_text(keyed)
    verdict = _feasibility(project, "gke-dev")
    assert not verdict["ok"] and "memory fractions" in str(verdict["refusal"]), verdict


@pytest.mark.parametrize("engine", ["vllm", "tensorrtllm", "llm-api"])
def test_a_sagemaker_ic_release_copy_running_an_engine_is_refused(
    tmp_path: Path, sample_repo: Path, engine: str, s3_release: Callable[[Path], str]
) -> None:
    manifest = make_release(sample_repo, tmp_path, copies=1)
    first = manifest.models[0]
    if engine == "llm-api":
        files = {**first.files, f"{first.name}/1/model.yaml": "0"}
        changed = replace(first, backend="python", files=files)
    else:
        changed = replace(first, backend=engine)
    (tmp_path / "manifest.json").write_text(
        replace(manifest, models=(changed, *manifest.models[1:])).to_json()
    )
    run = run_stack("sagemaker-ic-dev", {"releaseUrl": s3_release(tmp_path)}, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert first.name in str(run.error) and "-py3" in str(run.error)
    assert run.error.hint and "gke or eks" in run.error.hint
