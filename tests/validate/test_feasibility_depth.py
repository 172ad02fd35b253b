"""One feasibility depth (issue 39 item 3): the checks ``tdk validate --target/--stack`` ran
on top of ``feasible()`` now live inside it, so the Pulumi program, ``tdk doctor`` and ``tdk
plan`` refuse what validate refuses: the LLM engines' files against the vLLM of the image the
stack deploys (TDK603-605, TDK613, TDK615) and the working set of ``--copies`` (TDK905)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from cli.main import app
from infra.config import ConfigReader
from infra.targets import registry, stacks
from infra.targets.feasibility import feasible, flag_stack
from packager.publish import load_models
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import ROOT, run_stack, stack_config
from tests.validate.helpers import PYTHON_MODEL, make_repo
from tests.validate.llm import corpus as c

#: the vllm_backend sample's old switch: vLLM 0.10 replaced it by enable_log_requests, so the
#: 26.05 image the committed Kubernetes stacks deploy (vLLM 0.19.0) refuses it at load
OLD_ARG = "disable_log_requests"


def _old_vllm(root: Path) -> Path:
    return c.vllm_repo(root, args=dict(c.VLLM_ARGS, **{OLD_ARG: True}))


def _stack(name: str, overrides: dict[str, Any]) -> registry.StackSettings:
    return stacks.settings(ConfigReader(stack_config(name, overrides).get), name)


def test_the_program_checks_engine_arguments_against_its_image(tmp_path: Path) -> None:
    """Was: validate --stack gke-dev refused the model (TDK603), pulumi up deployed it."""
    repo = _old_vllm(tmp_path / "repo")
    refusal = feasible(_stack("gke-dev", {"k8sModels": str(repo)})).first_refusal()
    assert refusal is not None and refusal.code == "TDK603", refusal
    assert "vLLM 0.19.0" in refusal.message
    run = run_stack("gke-dev", {"k8sModels": str(repo)}, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert OLD_ARG in str(run.error) and "vLLM 0.19.0" in str(run.error)
    assert run.error.hint and "enable_log_requests" in run.error.hint
    assert not run.of_type("kubernetes:apps/v1:Deployment")


def test_doctor_checks_engine_arguments_against_the_stacks_image(tmp_path: Path) -> None:
    from cli.doctor import _feasibility

    repo = _old_vllm(tmp_path / "repo")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    gke = (ROOT / "Pulumi.gke-dev.yaml").read_text()
    keyed = gke.replace("config:\n", f"config:\n  triton-deploy-kit:k8sModels: {repo}\n", 1)
    (project / "Pulumi.gke-dev.yaml").write_text(keyed)
    verdict = _feasibility(project, "gke-dev")
    assert not verdict["ok"] and OLD_ARG in str(verdict["refusal"]), verdict


def test_plan_prices_no_candidate_whose_engine_arguments_the_image_refuses(
    tmp_path: Path,
) -> None:
    """``tdk plan --write-stack`` on a stack whose models the image refuses: no key written."""
    repo = _old_vllm(tmp_path / "repo")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project)
    gke = (ROOT / "Pulumi.gke-dev.yaml").read_text()
    stack = project / "Pulumi.gke-dev.yaml"
    stack.write_text(
        gke.replace("config:\n", f"config:\n  triton-deploy-kit:k8sModels: {repo}\n", 1)
    )
    before = stack.read_text()
    level = {"mode": "concurrency", "level": 4, "throughput_rps": 30, "p50_ms": 20,
             "p90_ms": 30, "p99_ms": 45, "errors": {}}  # fmt: skip
    bench = tmp_path / "bench.json"
    measured = {"target": "gke", "instance_type": None, "gpu": "nvidia-l4",
                "target_model": "vllm_model", "levels": [level]}  # fmt: skip
    bench.write_text(json.dumps(measured))
    args = ["plan", str(bench), "--latency-budget-ms", "50", "--peak-rps", "100"]
    result = CliRunner().invoke(app, [*args, "--write-stack", str(stack)])
    assert result.exit_code != 0, result.output
    assert OLD_ARG in result.output and "cannot deploy" in result.output
    assert stack.read_text() == before


def test_validate_stack_reports_the_image_check_once(tmp_path: Path) -> None:
    """validate's own model checks leave the image's rules to feasible: one finding each."""
    repo = _old_vllm(tmp_path / "repo")
    args = ["validate", str(repo), "--target", "gke", "--gpu", "nvidia-l4", "--json"]
    result = CliRunner().invoke(app, args)
    findings = json.loads(result.stdout)
    old = [f for f in findings if f["field"] == f"model.json {OLD_ARG}"]
    assert result.exit_code == 1 and [f["code"] for f in old] == ["TDK603"], findings
    assert "vLLM 0.19.0" in old[0]["message"]


def test_the_working_set_of_copies_is_a_feasibility_finding(tmp_path: Path) -> None:
    """TDK905 comes from ``feasible(copies=...)``, not from validate alone."""
    weights = {"1/model.py": PYTHON_MODEL, "1/weights.bin": "x" * 4096}
    config = 'name: "big"\nbackend: "python"\nmax_batch_size: 0\n'
    repo = make_repo(tmp_path / "repo", {"big": (config, weights)})
    models = load_models([repo])
    flags = {"instance_type": "ml.g5.xlarge"}
    stack = flag_stack(registry.get("sagemaker"), flags, models, ROOT)
    one = feasible(stack, models, copies=1)
    assert "TDK905" not in {f.code for f in one.findings}
    (fit,) = one.fits
    assert fit.gpu_copies is not None
    many = feasible(stack, models, copies=fit.gpu_copies + 1)
    (found,) = [f for f in many.findings if f.code == "TDK905"]
    assert f"{fit.gpu_copies + 1} copies of 'big'" in found.message
