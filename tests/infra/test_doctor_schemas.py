"""``tdk doctor`` compares the facts a stack relies on with the installed Pulumi providers'
schemas (issue 37 item 7): pulumi_aws's EC2 InstanceType enum against the GPU sizes EKS offers,
pulumi_aws_native's ClusterUpgradePolicySupportType against eksSupportType, pulumi_gcp's
documented release channels against gkeReleaseChannel. Drift is a finding that can fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.facts import INFRA_EXTRA_INSTALL
from infra.targets.eks import schema as eks_schema
from infra.targets.gke import schema as gke_schema

ROOT = Path(__file__).resolve().parents[2]


def _doctor(stack: str) -> tuple[int, dict[str, dict[str, Any]]]:
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--json", "--stack", stack],
        env={"TDK_TODAY": "2026-11-27"},
    )  # fmt: skip
    found = json.loads(result.stdout)["stacks"][stack]
    return result.exit_code, {f["fact"]: f for f in found if f["fact"].startswith("provider")}


def test_the_installed_providers_agree_with_the_kit_today() -> None:
    _, eks = _doctor("eks-dev")
    assert {f.split(" ")[2].lstrip("(") for f in eks} == {
        "pulumi_aws", "pulumi_aws_native", "botocore"
    }  # fmt: skip
    _, gke = _doctor("gke-dev")
    assert [f.split(" ")[2].lstrip("(") for f in gke] == ["pulumi_gcp"]
    assert {f["status"] for f in [*eks.values(), *gke.values()]} == {"ok"}
    assert all(f["checked"] == "installed" for f in [*eks.values(), *gke.values()])


def test_a_support_type_the_provider_drops_fails_doctor(monkeypatch: pytest.MonkeyPatch) -> None:
    real = eks_schema.enum_values

    def values(package: str, module: str, name: str) -> tuple[str, list[str]]:
        source, found = real(package, module, name)
        if name == "ClusterUpgradePolicySupportType":
            return source, [v for v in found if v != "EXTENDED"] + ["PREMIUM"]
        return source, [t for t in found if t != "g6e.xlarge"] + ["g9.xlarge"]

    monkeypatch.setattr(eks_schema, "enum_values", values)
    code, eks = _doctor("eks-dev")
    assert code == 1
    support = next(f for k, f in eks.items() if "ClusterUpgradePolicySupportType" in k)
    assert support["status"] == "broken" and "eksSupportType EXTENDED" in support["note"]
    assert "PREMIUM" in support["note"]
    types = next(f for k, f in eks.items() if "InstanceType" in k)
    assert types["status"] == "broken" and "g6e.xlarge: offered by tdk" in types["note"]
    assert "family g9 " in types["note"]


def test_a_gpu_family_the_kit_does_not_know_is_aged() -> None:
    drift = eks_schema.instance_drift("pulumi_aws x InstanceType", ["g5.xlarge", "g9.2xlarge"])
    assert drift.unknown and "family g9" in drift.unknown[0]
    assert any(r.startswith("g4dn.xlarge: offered by tdk") for r in drift.refused)


def test_the_channels_are_read_from_the_installed_gcp_provider() -> None:
    source, channels = gke_schema.read_channels()
    assert source.startswith("pulumi_gcp ")
    assert channels == ["UNSPECIFIED", "RAPID", "REGULAR", "STABLE", "EXTENDED"]
    text = 'class ClusterReleaseChannelArgsDict(TypedDict):\n    """\n    * RAPID: a\n    """\n'
    assert gke_schema.accepted_channels(text) == ["RAPID"]
    assert gke_schema.accepted_channels("nothing") == []


def test_a_channel_the_provider_no_longer_accepts_fails_doctor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        gke_schema, "read_channels", lambda: ("pulumi_gcp 99 c", ["RAPID", "REGULAR", "STABLE",
                                                                 "LTS"]),
    )  # fmt: skip
    code, gke = _doctor("gke-dev")
    (channel,) = gke.values()
    assert code == 1 and channel["status"] == "broken"
    assert "gkeReleaseChannel EXTENDED: offered by tdk" in channel["note"]
    assert "gkeReleaseChannel LTS accepted" in channel["note"]
    monkeypatch.setattr(gke_schema, "read_channels", lambda: ("pulumi_gcp 99 c", []))
    code, gke = _doctor("gke-dev")
    assert code == 1 and "re-read it" in next(iter(gke.values()))["note"]


def test_a_missing_provider_is_unverified_not_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> list[Any]:
        raise ImportError("No module named 'pulumi_gcp'")

    monkeypatch.setattr(gke_schema, "drift", missing)
    _, gke = _doctor("gke-dev")
    (finding,) = gke.values()
    assert finding["status"] == "unverified" and INFRA_EXTRA_INSTALL in finding["note"]


def test_an_ami_type_eks_no_longer_takes_fails_doctor(monkeypatch: pytest.MonkeyPatch) -> None:
    source, enums = eks_schema.botocore_enums()
    assert "AL2023_x86_64_NVIDIA" in enums["AMITypes"] and "SPOT" in enums["CapacityTypes"]
    enums = {**enums, "AMITypes": [t for t in enums["AMITypes"] if "NVIDIA" not in t]}
    monkeypatch.setattr(eks_schema, "botocore_enums", lambda: (source, enums))
    code, eks = _doctor("eks-dev")
    nodes = next(f for k, f in eks.items() if "AMITypes" in k)
    assert code == 1 and nodes["status"] == "broken"
    assert "AMITypes AL2023_x86_64_NVIDIA: set by tdk's node groups" in nodes["note"]
