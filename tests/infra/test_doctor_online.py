"""``tdk doctor --online`` asks EKS itself (DescribeClusterVersions, which moto lacks: botocore's
Stubber answers with the API's own shapes) and reports where the kit's calendar drifted; a
fact only the kit's table says is never "ok" (issue 37, item 7)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from typer.testing import CliRunner

from cli.main import app
from infra.targets.eks import target as eks_target

ROOT = Path(__file__).resolve().parents[2]
PACIFIC = dt.timezone(dt.timedelta(hours=-8))


def _version(v: str, standard: dt.date, extended: dt.date, status: str) -> dict[str, Any]:
    """One ClusterVersionInformation as EKS answers it (16:00 Pacific the day before)."""

    def at(day: dt.date) -> dt.datetime:
        return dt.datetime.combine(day - dt.timedelta(days=1), dt.time(16), PACIFIC)

    return {"clusterVersion": v, "clusterType": "eks", "status": status,
            "endOfStandardSupportDate": at(standard), "endOfExtendedSupportDate": at(extended),
            "releaseDate": at(standard - dt.timedelta(days=425))}  # fmt: skip


def _stubbed(monkeypatch: pytest.MonkeyPatch, versions: list[dict[str, Any]]) -> Stubber:
    client = boto3.client("eks", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")  # fmt: skip
    stub = Stubber(client)
    stub.add_response("describe_cluster_versions", {"clusterVersions": versions},
                      {"clusterType": "eks", "includeAll": True})  # fmt: skip
    stub.activate()
    monkeypatch.setattr(eks_target, "eks_client", lambda region: client)
    return stub


def _doctor(*args: str) -> dict[str, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--stack", "eks-dev", "--json", *args],
        env={"TDK_TODAY": "2026-11-27"},
    )  # fmt: skip
    return {f["fact"]: f for f in json.loads(result.stdout)["stacks"]["eks-dev"]}


def test_a_version_eks_offers_that_the_kit_lacks_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub = _stubbed(monkeypatch, [
        _version("1.36", dt.date(2027, 8, 2), dt.date(2028, 8, 2), "STANDARD_SUPPORT"),
        _version("1.37", dt.date(2027, 12, 2), dt.date(2028, 12, 2), "STANDARD_SUPPORT"),
        _version("1.34", dt.date(2026, 12, 3), dt.date(2027, 12, 2), "STANDARD_SUPPORT"),
    ])  # fmt: skip
    facts = _doctor("--online")
    stub.assert_no_pending_responses()
    drift = facts["cloud facts (eks:DescribeClusterVersions)"]
    assert drift["status"] == "aged"
    assert "EKS offers 1.37" in drift["note"]
    assert "1.34: standard support ends 2026-12-03 per EKS, 2026-12-02 in the kit" in drift["note"]
    assert "1.36" not in drift["note"]  # agrees


def test_an_answer_that_agrees_is_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    _stubbed(monkeypatch, [
        _version("1.36", dt.date(2027, 8, 2), dt.date(2028, 8, 2), "STANDARD_SUPPORT"),
    ])  # fmt: skip
    facts = _doctor("--online")
    assert facts["cloud facts (eks:DescribeClusterVersions)"]["status"] == "ok"


def test_without_online_the_calendar_is_unverified_not_ok() -> None:
    facts = _doctor()
    assert facts["Kubernetes version"]["status"] == "unverified"
    assert "--online" in facts["Kubernetes version"]["note"]
    assert facts["keda chart"]["status"] == "unverified"
    assert not any(f.startswith("cloud facts") for f in facts)


def test_no_credentials_is_said_never_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(region: str) -> Any:
        raise RuntimeError("no credentials")

    monkeypatch.setattr(eks_target, "eks_client", refuse)
    facts = _doctor("--online")
    assert facts["cloud facts"]["status"] == "unverified"
    assert "no credentials" in facts["cloud facts"]["note"]


class _Answer:
    """What requests' Response gives ``server_config``: the body GKE documents."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def raise_for_status(self) -> None:
        return None

    def json(self) -> dict[str, Any]:
        return self.body


class _Session:
    def __init__(self, body: dict[str, Any]) -> None:
        self.body, self.urls = body, []

    def get(self, url: str, timeout: float) -> _Answer:
        self.urls.append(url)
        return _Answer(self.body)


def test_gke_channels_are_compared_with_get_server_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from infra.targets.gke import target as gke_target

    body = {"channels": [
        {"channel": "RAPID", "validVersions": ["1.38.1-gke.100", "1.35.2-gke.1"]},
        {"channel": "STABLE", "validVersions": ["1.35.4-gke.2", "1.34.9-gke.3"]},
    ]}  # fmt: skip
    session = _Session(body)
    monkeypatch.setattr(gke_target, "gke_session", lambda: session)
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--stack", "gke-dev", "--json", "--online"],
        env={"TDK_TODAY": "2026-11-27"},
    )  # fmt: skip
    facts = {f["fact"]: f for f in json.loads(result.stdout)["stacks"]["gke-dev"]}
    drift = facts["cloud facts (container.projects.locations.getServerConfig)"]
    assert drift["status"] == "aged"
    assert "RAPID offers 1.35-1.38 per GKE, 1.34-1.37 in the kit" in drift["note"]
    assert "STABLE" not in drift["note"]  # agrees
    assert session.urls and "/serverConfig" in session.urls[0]
