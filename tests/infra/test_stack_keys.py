"""A stack key Pulumi.yaml does not declare is ignored by every reader (its default applies):
``validate --stack``, ``doctor`` and the program warn, naming the closest declared key
(issue 37, item 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.stack_keys import undeclared
from tests.infra.pulumi_harness import run_stack

ROOT = Path(__file__).resolve().parents[2]
TYPO = "triton-deploy-kit:kubernetesVersion"


def _project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    stack = (ROOT / "Pulumi.eks-dev.yaml").read_text() + f'  {TYPO}: "1.35"\n'
    (tmp_path / "Pulumi.eks-typo.yaml").write_text(stack)
    return tmp_path


def test_the_closest_declared_key_is_named() -> None:
    (warning,) = undeclared(ROOT, [TYPO, "aws:region", "triton-deploy-kit:eksSpot"])
    assert TYPO in warning and "did you mean triton-deploy-kit:eksKubernetesVersion" in warning
    assert undeclared(ROOT, ["triton-deploy-kit:target", "gcp:project"]) == []


def test_validate_stack_warns(tmp_path: Path, sample_repo: Path) -> None:
    project = _project(tmp_path)
    result = CliRunner().invoke(
        app, ["validate", str(sample_repo), "--stack", "eks-typo", "--project-dir", str(project)]
    )
    assert result.exit_code == 0, result.output
    assert "kubernetesVersion" in result.stderr and "eksKubernetesVersion" in result.stderr


def test_doctor_reports_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(project), "--stack", "eks-typo", "--json"],
        env={"TDK_TODAY": "2026-11-27"},
    )  # fmt: skip
    facts = {f["fact"]: f for f in json.loads(result.stdout)["stacks"]["eks-typo"]}
    assert facts["stack keys"]["status"] == "aged"
    assert "eksKubernetesVersion" in facts["stack keys"]["note"]


def test_the_program_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi

    told: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *_, **__: told.append(message))
    run_stack("eks-dev", overrides={"kubernetesVersion": "1.35"})
    assert any(TYPO in m and "eksKubernetesVersion" in m for m in told), told
    told.clear()
    run_stack("eks-dev")
    assert not any(TYPO in m for m in told)
