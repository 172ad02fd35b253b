"""``tdk doctor``: facts of the committed stacks, their ages, replayed on an injected today."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.registry_lists import deployable_targets, dev_stack

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _doctor(today: str, *args: str, project_dir: Path = ROOT) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(
        app,
        ["doctor", "--project-dir", str(project_dir), "--json", *args],
        env={"TDK_TODAY": today},
    )
    return result.exit_code, json.loads(result.stdout)


def _by_fact(report: dict[str, Any], stack: str) -> dict[str, dict[str, Any]]:
    return {f["fact"]: f for f in report["stacks"][stack]}


def test_committed_stacks_are_healthy_on_the_day_the_facts_were_checked() -> None:
    code, report = _doctor("2026-11-24")
    assert code == 0 and report["ok"] and report["today"] == "2026-11-24"
    assert set(report["stacks"]) >= {dev_stack(t) for t in deployable_targets()}
    eks = _by_fact(report, "eks-dev")
    assert eks["Kubernetes version"]["value"] == "1.36"
    assert eks["Kubernetes version"]["source"].startswith("https://docs.aws.amazon.com/eks/")
    # NVIDIA's releases after the default (26.06-26.10) are reported, never adopted silently
    newer = {f["status"] for s in report["stacks"].values() for f in s
             if f["fact"] == "newer Triton releases"}  # fmt: skip
    assert newer == {"aged"}
    # the default 26.05's TensorRT and driver are in no source checked: aged, naming the source
    plan = {f["status"] for s in report["stacks"].values() for f in s
            if f["fact"] == "Triton 26.05 TensorRT / driver / base"}  # fmt: skip
    assert plan == {"aged"}
    skip = {"newer Triton releases", "Triton 26.05 TensorRT / driver / base"}
    rest = [f for s in report["stacks"].values() for f in s if f["fact"] not in skip]
    # what only the kit's own tables say is "unverified" (issue 37), the rest compared and ok
    assert {f["status"] for f in rest} == {"ok", "unverified"}
    assert all("the kit's" in f["note"] for f in rest if f["status"] == "unverified")


def test_aged_facts_are_reported_without_failing() -> None:
    """13 months on: the image is over 12 months old, the prices over 90 days."""
    code, report = _doctor("2027-06-02", "--stack", "gke-dev")
    assert code == 0
    gke = _by_fact(report, "gke-dev")
    assert gke["Triton image"]["status"] == "aged" and "13 months" in gke["Triton image"]["note"]
    assert gke["list prices"]["status"] == "aged"


def test_a_version_in_extended_support_without_opt_in_exits_1(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    stack = (ROOT / "Pulumi.eks-dev.yaml").read_text()
    stack += "  triton-deploy-kit:eksKubernetesVersion: '1.33'\n"
    (tmp_path / "Pulumi.eks-old.yaml").write_text(stack)
    code, report = _doctor("2026-11-24", "--stack", "eks-old", project_dir=tmp_path)
    assert code == 1 and not report["ok"]
    (finding,) = [f for f in report["stacks"]["eks-old"] if f["status"] == "broken"]
    assert "extended support" in finding["note"]


@pytest.mark.parametrize("today", ["2026-11-27"])
def test_support_ending_within_60_days_is_aged(tmp_path: Path, today: str) -> None:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    stack = (ROOT / "Pulumi.eks-dev.yaml").read_text()
    stack += "  triton-deploy-kit:eksKubernetesVersion: '1.34'\n"
    (tmp_path / "Pulumi.eks-34.yaml").write_text(stack)
    code, report = _doctor(today, "--stack", "eks-34", project_dir=tmp_path)
    assert code == 0
    version = _by_fact(report, "eks-34")["Kubernetes version"]
    assert version["status"] == "aged" and "5 days" in version["note"]
