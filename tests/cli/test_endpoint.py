"""``tdk endpoint status|wait``: SageMaker against moto, local against a real local endpoint
(gke/eks against a real Triton: tests/prom/test_live.py), through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.sagemaker.endpoint import EndpointState, wait_until_in_service
from tdk.errors import EndpointError
from tests.cli.sagemaker_moto import create_mme_endpoint, moto_aws
from tests.local.local_helpers import make_release, start_endpoint


@pytest.fixture(scope="module")
def sagemaker() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch, moto_aws(patch):
        create_mme_endpoint("tdk-ep")
        yield


def test_status_json_reports_state_and_instance_counts(sagemaker: None) -> None:
    result = CliRunner().invoke(
        app, ["endpoint", "status", "--target", "sagemaker", "--endpoint", "tdk-ep", "--json"]
    )
    assert result.exit_code == 0, result.output
    state = json.loads(result.stdout)
    assert state["status"] == "InService"
    assert state["failure_reason"] is None
    [variant] = state["variants"]
    assert variant["name"] == "AllTraffic"
    assert variant["instance_type"] == "ml.g4dn.xlarge"
    assert (variant["current_instances"], variant["desired_instances"]) == (1, 1)
    assert (variant["min_instances"], variant["max_instances"]) == (1, 3)


def test_status_table_and_unknown_endpoint(sagemaker: None) -> None:
    shown = CliRunner().invoke(
        app, ["endpoint", "status", "--target", "sagemaker", "--endpoint", "tdk-ep"]
    )
    assert shown.exit_code == 0, shown.output
    assert "InService" in shown.stdout and "ml.g4dn.xlarge" in shown.stdout
    missing = CliRunner().invoke(
        app, ["endpoint", "status", "--target", "sagemaker", "--endpoint", "nope"]
    )
    assert missing.exit_code == 1
    assert "describe endpoint nope" in missing.output


def test_wait_returns_once_in_service(sagemaker: None) -> None:
    result = CliRunner().invoke(
        app,
        [
            "endpoint",
            "wait",
            "--target",
            "sagemaker",
            "--endpoint",
            "tdk-ep",
            "--timeout",
            "30",
            "--interval",
            "0.1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "tdk-ep: InService" in result.stdout


def _states(*statuses: str, reason: str | None = None) -> Iterator[EndpointState]:
    for status in statuses:
        yield EndpointState("ep", status, reason, "cfg", "")


def test_wait_follows_updates_and_fails_on_rollback() -> None:
    seen: list[str] = []
    states = _states("Updating", "Updating", "InService")
    done = wait_until_in_service(
        lambda: next(states), 60, 0, on_change=lambda s: seen.append(s.status), sleep=lambda _: None
    )
    assert done.status == "InService" and seen == ["Updating", "InService"]
    rolled = _states("Updating", "RollingBack", "InService", reason="alarm 5xx-rate fired")
    with pytest.raises(EndpointError, match=r"rolled the update back.*5xx-rate"):
        wait_until_in_service(lambda: next(rolled), 60, 0, sleep=lambda _: None)


def test_wait_fails_fast_on_failed_and_at_the_timeout() -> None:
    failed = _states("Creating", "Failed", reason="image pull denied")
    with pytest.raises(EndpointError, match="is Failed: image pull denied"):
        wait_until_in_service(lambda: next(failed), 60, 0, sleep=lambda _: None)
    stuck = EndpointState("ep", "Creating", None, "cfg", "")
    with pytest.raises(EndpointError, match="still Creating after 0 s"):
        wait_until_in_service(lambda: stuck, 0, 0, sleep=lambda _: None)


def test_status_without_a_region_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    result = CliRunner().invoke(
        app, ["endpoint", "status", "--target", "sagemaker", "--endpoint", "tdk-ep"]
    )
    assert result.exit_code == 1
    assert "no AWS region" in result.output and "--region" in result.output


def test_local_status_and_wait_through_the_same_contract(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_release(sample_repo, tmp_path / "store", copies=1, only=("text_classifier",))
    running = start_endpoint(tmp_path / "store", tmp_path / "state", name="ops")
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    args = ["--target", "local", "--endpoint", "ops"]
    try:
        waited = CliRunner().invoke(
            app, ["endpoint", "wait", *args, "--timeout", "30", "--interval", "0.1"]
        )
        assert waited.exit_code == 0, waited.output
        assert "ops: InService" in waited.stdout
        shown = CliRunner().invoke(app, ["endpoint", "status", *args, "--json"])
        assert shown.exit_code == 0, shown.output
        state = json.loads(shown.stdout)
        assert (state["status"], state["ready"], state["url"]) == ("InService", True, running.url)
        assert state["models"] == 1
    finally:
        running.stop()
    gone = CliRunner().invoke(app, ["endpoint", "status", *args])
    assert gone.exit_code == 2 and "no local endpoint named 'ops'" in gone.output
