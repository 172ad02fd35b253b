"""One alert e-mail key (issue 40 item 4): ``alertEmail`` reaches every target's alarms or alert
policies and the budget, under Pulumi mocks; the keys it replaces (``sagemakerAlarmEmail``,
``k8sAlertEmail``, ``budgetEmail``) still give the address for a release, with a warning, and a
conflicting old key next to the new one is refused naming both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import DEPRECATED_KEYS, deprecated_keys
from infra.stack_keys import deprecated_in_file, stack_file_keys, undeclared
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack
from tests.registry_lists import cloud_targets, dev_stack

ROOT = Path(__file__).resolve().parents[2]
NEW = "new@example.com"
OLD = "old@example.com"

#: stack -> the deprecated key its alarms or alerts used to read
ALERT_KEY = {
    "sagemaker-dev": "sagemakerAlarmEmail",
    "sagemaker-ic-dev": "sagemakerAlarmEmail",
    "eks-dev": "k8sAlertEmail",
    "gke-dev": "k8sAlertEmail",
}


def _alerted(run: StackRun) -> set[str]:
    """Every address the stack's alarms, alert policies and budgets mail."""
    found = {
        r.inputs["endpoint"]
        for r in run.of_type("aws:sns/topicSubscription:TopicSubscription")
        if r.inputs.get("protocol") == "email"
    }
    found |= {
        r.inputs["labels"]["email_address"]
        for r in run.of_type("gcp:monitoring/notificationChannel:NotificationChannel")
    }
    for budget in run.of_type("aws:budgets/budget:Budget"):
        for note in budget.inputs["notifications"]:
            found |= set(note["subscriberEmailAddresses"])
    return found


@pytest.mark.parametrize("stack", sorted(ALERT_KEY))
def test_the_one_key_reaches_every_alarm_alert_and_budget(stack: str) -> None:
    run = run_stack(stack, overrides={"alertEmail": NEW})
    assert run.error is None
    assert _alerted(run) == {NEW}
    assert "triton-deploy-kit:alertEmail" in stack_file_keys(ROOT, stack)


@pytest.mark.parametrize("stack", sorted(ALERT_KEY))
def test_the_deprecated_keys_still_give_the_address(stack: str) -> None:
    old = {ALERT_KEY[stack]: OLD, "budgetEmail": OLD, "alertEmail": ""}
    run = run_stack(stack, overrides=old)
    assert run.error is None
    assert _alerted(run) == {OLD}


@pytest.mark.parametrize("stack", [dev_stack(t) for t in cloud_targets("aws")])
def test_an_old_budget_key_alone_still_feeds_the_aws_budget(stack: str) -> None:
    run = run_stack(stack, overrides={"budgetEmail": OLD, "alertEmail": ""})
    budget = run.one("aws:budgets/budget:Budget").inputs
    assert all(n["subscriberEmailAddresses"] == [OLD] for n in budget["notifications"])


@pytest.mark.parametrize(("stack", "old"), [*ALERT_KEY.items(), ("eks-dev", "budgetEmail")])
def test_a_conflicting_old_key_is_refused_naming_both(stack: str, old: str) -> None:
    run = run_stack(stack, overrides={"alertEmail": NEW, old: OLD}, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert not run.resources
    assert f"triton-deploy-kit:alertEmail is {NEW!r}" in run.error.message
    assert f"triton-deploy-kit:{old} is {OLD!r}" in run.error.message
    assert f"pulumi config rm triton-deploy-kit:{old}" in run.error.hint


def test_the_same_address_under_both_keys_is_accepted() -> None:
    run = run_stack("eks-dev", overrides={"alertEmail": NEW, "k8sAlertEmail": NEW})
    assert run.error is None and _alerted(run) == {NEW}


def test_a_deprecated_key_warns_naming_the_new_one_and_is_not_undeclared() -> None:
    values = {f"triton-deploy-kit:{old}": OLD for old in DEPRECATED_KEYS}
    warnings = deprecated_keys(values.get)
    assert len(warnings) == len(DEPRECATED_KEYS)
    assert warnings == [
        f"triton-deploy-kit:{old} is deprecated: use triton-deploy-kit:{new} (the old key goes "
        "in the next release)"
        for old, new in DEPRECATED_KEYS.items()
    ]
    assert deprecated_keys({"triton-deploy-kit:budgetEmail": ""}.get) == []  # empty: unset
    assert undeclared(ROOT, list(values)) == []


def test_a_stack_file_with_an_old_key_warns_and_the_committed_ones_do_not(
    tmp_path: Path,
) -> None:
    for stack in ALERT_KEY:
        assert deprecated_in_file(ROOT, stack) == []
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "Pulumi.x.yaml").write_text(
        "config:\n  triton-deploy-kit:target: eks\n  triton-deploy-kit:k8sAlertEmail: a@b.co\n"
    )
    [warning] = deprecated_in_file(tmp_path, "x")
    assert warning.startswith("triton-deploy-kit:k8sAlertEmail is deprecated")


def test_the_program_warns_of_an_old_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi

    said: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: said.append(message))
    run: Any = run_stack("gke-dev", overrides={"k8sAlertEmail": "ops@example.com"})
    assert run.error is None
    assert any("k8sAlertEmail is deprecated: use triton-deploy-kit:alertEmail" in s for s in said)
