"""What ``tdk plan`` asks of the targets, asked of the library (``infra.targets.planning``): the
target a plan is for, every candidate through the one feasibility path before it is priced,
and the scaling keys a plan writes, checked against the whole stack before any write."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from infra.perf.plan import candidates as cands
from infra.perf.plan.capacity import plan as make_plan
from infra.planning.report import PlanReport
from infra.targets import catalogs, registry, stacks
from infra.targets.planning import check_candidates, checked_scaling_updates, plan_target
from infra.targets.registry import plan_port
from tdk.errors import ConfigError, UsageError

ROOT = Path(__file__).resolve().parents[2]


def _committed(tmp_path: Path, name: str) -> tuple[Path, str]:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    return tmp_path, name


def test_the_target_is_the_flag_the_stack_or_the_measurement(tmp_path: Path) -> None:
    stack = stacks.load_stack(*_committed(tmp_path, "eks-dev"))
    assert plan_target(None, "sagemaker", stack).name == "eks"  # the stack's, over the unit's
    assert plan_target(None, "gke", None).name == "gke"  # the measurement's
    assert plan_target(None, "", None).name == registry.able("plan")[0]
    with pytest.raises(UsageError, match="--target gke but the stack deploys eks"):
        plan_target("gke", "", stack)


def test_a_streamed_measurement_of_a_target_that_cannot_plan_it_is_refused() -> None:
    with pytest.raises(UsageError, match="taken on sagemaker-ic, which cannot plan") as caught:
        plan_target(None, "sagemaker-ic", None, streams=True)
    assert "--target" in (caught.value.hint or "")


def test_every_candidate_is_checked_before_it_is_priced() -> None:
    eks = registry.get("eks")
    check_candidates(eks, ["g5.xlarge", "g5.2xlarge:420"], "us-east-1", 1)
    with pytest.raises(UsageError, match=r"--instance-type inf2\.xlarge: the eks target cannot"):
        check_candidates(eks, ["g5.xlarge", "inf2.xlarge:900"], "us-east-1", 1)


def _report(entry_name: str, instance: str) -> PlanReport:
    entry = registry.get(entry_name)
    port = plan_port(entry)
    table = catalogs.plan_prices(port)
    option = cands.candidate(port, instance, port.default_region, table, Decimal(150), instance)
    return make_plan([], Decimal(1000), [option], Decimal("0.5"), table.date)


def test_the_scaling_keys_are_checked_against_the_stack_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    committed = _committed(tmp_path, "eks-dev")
    before = (tmp_path / "Pulumi.eks-dev.yaml").read_text()
    instance = plan_port(registry.get("eks")).plan_unit(stacks.load_stack(*committed)).instance
    updates = checked_scaling_updates(
        registry.get("eks"),
        _report("eks", instance),
        instance,
        committed,
    )
    assert updates["eksGpuNodesMax"] == updates["k8sMaxReplicas"] >= 1
    assert (tmp_path / "Pulumi.eks-dev.yaml").read_text() == before  # the caller writes


def test_scaling_keys_for_a_stack_that_cannot_deploy_are_refused(tmp_path: Path) -> None:
    committed = _committed(tmp_path, "eks-dev")
    instance = plan_port(registry.get("eks")).plan_unit(stacks.load_stack(*committed)).instance
    report = _report("eks", instance)
    path = tmp_path / "Pulumi.eks-dev.yaml"
    # an instance type the eks target refuses (Inferentia): the merged stack cannot deploy
    path.write_text(
        path.read_text().replace("eksGpuInstanceType: g5.xlarge", "eksGpuInstanceType: inf2.xlarge")
    )
    with pytest.raises(ConfigError, match="which the eks target refuses"):
        checked_scaling_updates(registry.get("eks"), report, instance, committed)
