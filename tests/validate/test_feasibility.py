"""Valid means deployable (issue 24): ``tdk validate --target/--stack`` and ``tdk doctor`` go
through the one feasibility path (``infra.targets.feasibility``), which parses the stack with
the target's own config reader, checks its capacity and places each model. One test per row of
the issue's table that validate used to pass and deploy refused, plus the generic placement."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.aws.offer import instance_spec
from infra.targets import registry
from infra.targets.capabilities import DECOUPLED, VALIDATE
from infra.targets.feasibility import placement_of
from packager.repository import discover_all
from packager.requirements import Requirements
from tests.validate.helpers import PYTHON_MODEL, make_repo

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))


def validate(*args: str) -> tuple[int, list[dict[str, Any]]]:
    result = CliRunner().invoke(app, ["validate", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _project(tmp_path: Path, stack: str, source: str, edit: tuple[str, str]) -> Path:
    """A project holding the kit's Pulumi.yaml and committed stack ``source`` with one edit."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    shutil.copy(ROOT / "Pulumi.yaml", project)
    text = (ROOT / f"Pulumi.{source}.yaml").read_text()
    edited = re.sub(edit[0], edit[1], text, flags=re.MULTILINE)
    assert edited != text, edit
    (project / f"Pulumi.{stack}.yaml").write_text(edited)
    return project


def _decoupled_repo(tmp_path: Path) -> Path:
    config = """name: "streamer"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
"""
    return make_repo(tmp_path / "decoupled", {"streamer": (config, {"1/model.py": PYTHON_MODEL})})


@pytest.mark.parametrize("stack", COMMITTED)
def test_every_committed_stack_validates(sample_repo: Path, stack: str) -> None:
    assert validate(str(sample_repo), "--stack", stack, "--project-dir", str(ROOT)) == (0, [])


@pytest.mark.parametrize("target", registry.able(VALIDATE))
def test_every_target_validates_a_stack_built_from_its_defaults(
    sample_repo: Path, target: str
) -> None:
    status, findings = validate(str(sample_repo), "--target", target)
    assert status == 0, findings


def test_row1_a_cpu_instance_for_inference_components(sample_repo: Path) -> None:
    args = ("--target", "sagemaker-ic", "--instance-type", "ml.m5.xlarge")
    status, findings = validate(str(sample_repo), *args)
    assert status == 1 and [f["code"] for f in findings] == ["TDK910"]
    assert "'ml.m5.xlarge', a CPU instance type" in findings[0]["message"]
    assert "`--instance-type ml.g5.xlarge`" in findings[0]["fix"]  # the flag given, not a key


def test_row2_a_multi_gpu_instance_for_mme(sample_repo: Path) -> None:
    status, findings = validate(
        str(sample_repo), "--target", "sagemaker", "--instance-type", "ml.g5.12xlarge"
    )
    assert status == 1 and [f["code"] for f in findings] == ["TDK910"]
    assert "single-GPU instances only" in findings[0]["message"]
    assert "ml.g4dn.xlarge" in findings[0]["fix"]


def test_row3_an_eks_stack_name_its_parser_refuses(sample_repo: Path, tmp_path: Path) -> None:
    bad = "Bad_Name.With.Dots-and-far-too-long-for-eks-names"
    project = _project(tmp_path, "eks-bad", "eks-dev", (r"(:name:) .*$", rf"\1 {bad}"))
    status, findings = validate(
        str(sample_repo), "--stack", "eks-bad", "--project-dir", str(project)
    )
    assert status == 1 and [f["code"] for f in findings] == ["TDK910"]
    assert bad in findings[0]["message"] and findings[0]["file"].endswith("Pulumi.eks-bad.yaml")
    assert "name" in findings[0]["fix"]


def test_row4_ic_copies_at_creation_and_at_their_maximum(sample_repo: Path, tmp_path: Path) -> None:
    """The committed stack before its fix: 3 one-GPU copies, ml.g5.xlarge, at most 2."""
    max_two = (r"(sagemakerIcMaxInstances:) \d+", r"\1 2")
    project = _project(tmp_path, "ic-two", "sagemaker-ic-dev", max_two)
    status, findings = validate(
        str(sample_repo), "--stack", "ic-two", "--project-dir", str(project)
    )
    assert status == 1 and [f["code"] for f in findings] == ["TDK911", "TDK912"]
    creation, maximum = findings
    assert "at creation" in creation["message"] and "3 copies reserve 3 GPUs" in creation["message"]
    assert "sagemakerIcMaxInstances to at least 3" in creation["fix"]
    assert maximum["severity"] == "warning" and "4 copies" in maximum["message"]
    # the committed stack (fixed) fits at creation and at its maximum
    fixed = validate(str(sample_repo), "--stack", "sagemaker-ic-dev", "--project-dir", str(ROOT))
    assert fixed == (0, [])


def test_row7_decoupled_models_on_mme(tmp_path: Path) -> None:
    repo = _decoupled_repo(tmp_path)
    status, findings = validate(
        str(repo), "--target", "sagemaker", "--instance-type", "ml.g5.xlarge"
    )
    assert status == 1 and [f["code"] for f in findings] == ["TDK915"]
    assert "HTTP end point doesn't support models with decoupled" in findings[0]["message"]
    assert "sagemaker_server.cc" in findings[0]["message"]
    assert findings[0]["field"] == "model_transaction_policy.decoupled"
    serving = registry.able(DECOUPLED)  # every registered target that serves it
    assert serving and "sagemaker" not in serving
    assert all(t in findings[0]["fix"] for t in serving)
    for target in [t for t in serving if registry.get(t).refused(VALIDATE) is None]:
        status, findings = validate(str(repo), "--target", target)
        assert status == 0 and "TDK915" not in {f["code"] for f in findings}


def _needs(tmp_path: Path, **fields: Any) -> list[tuple[Any, Requirements]]:
    config = 'name: "{0}"\nbackend: "python"\nmax_batch_size: 0\n'
    repo = make_repo(
        tmp_path / "llm",
        {n: (config.format(n), {"1/model.py": PYTHON_MODEL}) for n in ("a", "b")},
    )
    models = discover_all(repo).models
    return [(m, Requirements(m.name, "python", **fields)) for m in models]


def test_gpus_per_replica_against_one_serving_unit(tmp_path: Path) -> None:
    eks = registry.get("eks")
    needs = _needs(tmp_path, gpus_per_replica=4)[:1]
    small = placement_of(eks, needs, instance_spec("eks", "g5.xlarge"))
    assert [f.code for f in small] == ["TDK913"]
    assert "needs 4 GPUs" in small[0].message and "1 GPU" in small[0].message
    assert placement_of(eks, needs, instance_spec("eks", "g5.12xlarge")) == []


def test_gpu_memory_fractions_add_up_per_shared_gpu(tmp_path: Path) -> None:
    needs = _needs(tmp_path, gpu_memory_fraction=0.6)
    shared = placement_of(registry.get("eks"), needs, instance_spec("eks", "g5.xlarge"))
    assert [f.code for f in shared] == ["TDK914"]
    assert "a 0.6 + b 0.6 = 1.2" in shared[0].message
    # one container per copy: each engine has its own GPUs
    own = instance_spec("sagemaker-ic", "ml.g5.xlarge", prefix="ml.", shares_gpus=False)
    assert placement_of(registry.get("sagemaker-ic"), needs, own) == []
    assert placement_of(registry.get("eks"), needs[:1], instance_spec("eks", "g5.xlarge")) == []


def test_doctor_lists_every_stack_with_its_feasibility(tmp_path: Path) -> None:
    project = _project(
        tmp_path, "ic-two", "sagemaker-ic-dev", (r"(sagemakerIcMaxInstances:) \d+", r"\1 2")
    )
    shutil.copy(ROOT / "Pulumi.gke-dev.yaml", project)
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(project), "--json"], env={"TDK_TODAY": "2026-11-26"}
    )
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and not report["ok"]
    assert set(report["feasibility"]) == {"gke-dev", "ic-two"}
    gke = dict(report["feasibility"]["gke-dev"])
    drivers = gke.pop("engine_driver")  # issue 48 item 4: gke's node driver is not recorded
    assert gke == {"target": "gke", "ok": True, "refusal": None, "fix": None}
    assert drivers and all("node driver unknown" in line for line in drivers)
    refused = report["feasibility"]["ic-two"]
    assert not refused["ok"] and "at creation" in refused["refusal"] and refused["fix"]
    human = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(project)], env={"TDK_TODAY": "2026-11-26"}
    )
    assert "feasibility" in human.stdout and "refused:" in human.stdout


def test_plan_writes_no_scaling_keys_into_a_stack_that_cannot_deploy(tmp_path: Path) -> None:
    project = _project(
        tmp_path, "sm-bad", "sagemaker-dev", (r"(:name:) .*$", r"\1 Bad_Name.With.Dots")
    )
    stack = project / "Pulumi.sm-bad.yaml"
    before = stack.read_text()
    level = {"mode": "concurrency", "level": 4, "throughput_rps": 300, "p50_ms": 20,
             "p90_ms": 30, "p99_ms": 45, "errors": {}}  # fmt: skip
    bench = tmp_path / "bench.json"
    measured = {"target": "sagemaker", "instance_type": "ml.g4dn.xlarge", "gpu": None,
                "target_model": "m-0.tar.gz", "levels": [level]}  # fmt: skip
    bench.write_text(json.dumps(measured))
    args = [
        "plan",
        str(bench),
        "--latency-budget-ms",
        "50",
        "--peak-rps",
        "1000",
        "--write-stack",
        str(stack),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and "Bad_Name.With.Dots" in result.output
    assert stack.read_text() == before


def test_target_flags_outside_a_project_use_the_kit_s_defaults(
    sample_repo: Path, tmp_path: Path
) -> None:
    """Run where no Pulumi.yaml is (a model repository's own checkout): the stack built from
    the flags sits on the kit's own declarations, with the same refusals."""
    elsewhere = str(tmp_path)
    ok = validate(str(sample_repo), "--target", "eks", "--project-dir", elsewhere)
    assert ok == (0, [])
    status, findings = validate(
        str(sample_repo), "--target", "sagemaker", "--instance-type", "ml.g5.12xlarge",
        "--project-dir", elsewhere,
    )  # fmt: skip
    assert status == 1 and [f["code"] for f in findings] == ["TDK910"]
