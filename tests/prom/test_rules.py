"""The alert rules as ``tdk render k8s`` writes them, checked and unit-tested by ``promtool``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from infra.k8s.alerts import RULE_FILE, alert_rules, rules_yaml
from tests.prom.tools import promtool
from tests.registry_lists import dev_stack, kubernetes_targets

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def _render(stack: str, out: Path) -> Path:
    result = CliRunner().invoke(
        app, ["render", "k8s", "--stack", stack, "--out", str(out), "--project-dir", str(ROOT),
              "--rules-out", str(out / RULE_FILE)]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out / RULE_FILE


@pytest.mark.parametrize("stack", [dev_stack(t) for t in kubernetes_targets()])
def test_rendered_rule_file_passes_promtool_check(stack: str, tmp_path: Path) -> None:
    rules = _render(stack, tmp_path)
    checked = promtool("check", "rules", rules)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 4 rules found" in checked.stdout
    names = [r["alert"] for r in yaml.safe_load(rules.read_text())["groups"][0]["rules"]]
    assert names == [
        "triton-error-rate",
        "triton-latency-slo",
        "triton-queue-ratio",
        "triton-metrics-absent",
    ]


def test_every_rule_fires_only_above_its_threshold_after_its_for(tmp_path: Path) -> None:
    _render("gke-dev", tmp_path)
    shutil.copy(HERE / "alerts.test.yaml", tmp_path)
    tested = promtool("test", "rules", "alerts.test.yaml", cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_render_json_lists_the_rule_file(tmp_path: Path) -> None:
    args = ["render", "k8s", "--stack", "eks-dev", "--out", str(tmp_path), "--json"]
    args += ["--rules-out", str(tmp_path / RULE_FILE)]
    result = CliRunner().invoke(app, [*args, "--project-dir", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["alert_rules"] == str(tmp_path / RULE_FILE)


def test_unit_tests_catch_the_or_vector_precedence_trap(tmp_path: Path) -> None:
    # The pre-fix form `(ratio) or vector(0) > t` fires whenever the series exist: the idle
    # case of alerts.test.yaml must say so, or the unit tests could not catch the defect.
    rules = alert_rules("triton", "tdk-gke-dev", 500, 2, 2)
    trapped = rules_yaml(rules).replace(", 1e-9) > 0.02", ", 1e-9) or vector(0) > 0.02")
    assert trapped != rules_yaml(rules)
    (tmp_path / RULE_FILE).write_text(trapped)
    shutil.copy(HERE / "alerts.test.yaml", tmp_path)
    tested = promtool("test", "rules", "alerts.test.yaml", cwd=tmp_path)
    assert tested.returncode != 0
    assert "alertname: triton-error-rate, time: 30m" in tested.stdout + tested.stderr


def test_missing_promtool_fails_with_the_setup_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match=r"promtool is not installed: run `make setup`"):
        promtool("--version")
