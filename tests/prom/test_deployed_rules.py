"""What the stacks deploy is what promtool tested: the AMP rule group (eks) and the Cloud
Monitoring PromQL alert policies (gke) carry the rendered alerts.rules.yaml expressions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from infra.k8s.alerts import RULE_FILE
from tests.infra.pulumi_harness import run_stack
from tests.prom.tools import promtool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def main_thread_loop() -> Iterator[None]:
    """Pulumi's mocks run on the main thread's current loop, which an earlier asyncio.run()
    in the session (tests/local) leaves unset: give these runs their own, then unset it."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _rendered(stack: str, out: Path) -> dict[str, dict[str, str]]:
    args = ["render", "k8s", "--stack", stack, "--out", str(out), "--project-dir", str(ROOT)]
    args += ["--rules-out", str(out / RULE_FILE)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rules = yaml.safe_load((out / RULE_FILE).read_text())["groups"][0]["rules"]
    return {r["alert"]: {"expr": r["expr"], "for": r["for"]} for r in rules}


def test_amp_rule_group_is_the_rendered_rule_file_and_passes_promtool(tmp_path: Path) -> None:
    run = run_stack("eks-dev")
    data = run.one("aws:amp/ruleGroupNamespace:RuleGroupNamespace").inputs["data"]
    (tmp_path / "amp.yaml").write_text(data)
    checked = promtool("check", "rules", tmp_path / "amp.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    deployed = {
        r["alert"]: {"expr": r["expr"], "for": r["for"]}
        for r in yaml.safe_load(data)["groups"][0]["rules"]
    }
    assert deployed == _rendered("eks-dev", tmp_path / "render")


def test_gke_alert_policies_evaluate_the_rendered_expressions(tmp_path: Path) -> None:
    run = run_stack("gke-dev")
    deployed = {}
    for policy in run.of_type("gcp:monitoring/alertPolicy:AlertPolicy"):
        [condition] = policy.inputs["conditions"]
        promql = condition["conditionPrometheusQueryLanguage"]
        deployed[policy.inputs["displayName"]] = {
            "expr": promql["query"],
            "for": promql["duration"],
        }
    assert deployed == _rendered("gke-dev", tmp_path)
