"""tdk doctor for aks (az CLI, Azure credentials, the calendar) and the metrics client's auth."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clients.prometheus import NoAuth, Request
from infra.clouds.azure import machine as cloud
from infra.targets.aks import doctor
from infra.targets.aks.client import EntraBearer, auth_for
from tdk.errors import EndpointError

ROOT = Path(__file__).resolve().parents[3]


def _profile(home: Path, subscriptions: object) -> None:
    (home / ".azure").mkdir(parents=True)
    (home / ".azure" / "azureProfile.json").write_text(json.dumps({"subscriptions": subscriptions}))


def test_an_az_login_profile_with_a_default_subscription_is_found(tmp_path: Path) -> None:
    _profile(tmp_path, [{"name": "other"}, {"name": "prod", "isDefault": True}])
    check = cloud.credentials({"HOME": str(tmp_path)})
    assert (check.scope, check.status) == ("azure", "ok") and "prod" in check.value


@pytest.mark.parametrize("subscriptions", [[], [{"name": "x"}], "nonsense", None])
def test_no_default_subscription_is_missing_with_the_fix(
    tmp_path: Path, subscriptions: object
) -> None:
    _profile(tmp_path, subscriptions)
    check = cloud.credentials({"HOME": str(tmp_path)})
    assert check.status == "missing" and "az login" in check.fix


def test_a_profile_that_is_not_json_or_a_directory_is_missing(tmp_path: Path) -> None:
    (tmp_path / ".azure" / "azureProfile.json").mkdir(parents=True)
    assert cloud.credentials({"HOME": str(tmp_path)}).status == "missing"
    assert cloud.credentials({"AZURE_CONFIG_DIR": "/dev/null/x"}).status == "missing"


def test_service_principal_variables_need_a_secret(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "ARM_CLIENT_ID": "c", "ARM_TENANT_ID": "t"}
    assert cloud.credentials(env).status == "missing"
    assert cloud.credentials({**env, "ARM_CLIENT_SECRET": "s"}).status == "ok"
    assert cloud.credentials({**env, "ARM_USE_MSI": "true"}).status == "ok"


def test_online_identity_and_version_drift_read_az_json() -> None:
    answers = {
        "account": {"name": "prod", "id": "sub-1", "user": {"name": "me@corp"}},
        "aks": {"values": [{"version": "1.38", "isPreview": False}]},
    }

    def run(args: list[str]) -> str:
        return json.dumps(answers[args[0]])

    assert cloud.identity(run) == "me@corp in prod (sub-1)"
    assert doctor.version_drift("eastus", run) == [
        "AKS offers 1.38 (GA); the kit's calendar lacks it"
    ]


def test_a_version_past_its_end_of_life_is_broken_and_near_it_aged() -> None:
    assert doctor.version_finding("1.34", dt.date(2026, 12, 5)).status == "broken"
    assert doctor.version_finding("1.34", dt.date(2026, 11, 1)).status == "aged"
    assert doctor.version_finding("1.36", dt.date(2026, 11, 27)).status == "unverified"


def test_doctor_for_an_aks_stack_checks_az_and_azure_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TDK_TODAY", "2026-11-27")
    for key in ("ARM_CLIENT_ID", "ARM_TENANT_ID", "AZURE_CONFIG_DIR"):
        monkeypatch.delenv(key, raising=False)
    done = CliRunner().invoke(
        app, ["doctor", "--stack", "aks-dev", "--project-dir", str(ROOT), "--json"]
    )
    report = json.loads(done.stdout)
    checks = {(c["scope"], c["check"]): c for c in report["machine"]}
    assert checks[("azure", "credentials")]["status"] == "missing"
    assert ("tools", "az") in checks
    facts = {f["fact"]: f for f in report["stacks"]["aks-dev"]}
    assert facts["Kubernetes version"]["value"] == "1.36"
    assert "cluster-autoscaler chart" not in facts


def test_metrics_on_a_workspace_are_signed_with_an_entra_token() -> None:
    class Credential:
        def get_token(self, scope: str) -> object:
            assert scope == "https://prometheus.monitor.azure.com/.default"
            return type("Token", (), {"token": "abc"})()

    url = "https://ws-1.eastus.prometheus.monitor.azure.com"
    auth = auth_for(url, Credential())
    signed = auth.sign(Request("GET", url + "/api/v1/query", {}))
    assert signed.headers["Authorization"] == "Bearer abc"
    assert isinstance(auth_for("http://127.0.0.1:9090"), NoAuth)


def test_a_missing_azure_login_is_an_endpoint_error_with_the_fix() -> None:
    class NoLogin:
        def get_token(self, scope: str) -> object:
            raise RuntimeError("DefaultAzureCredential failed")

    with pytest.raises(EndpointError) as caught:
        EntraBearer(NoLogin()).sign(Request("GET", "https://x", {}))
    assert "az login" in caught.value.hint


def test_metrics_read_the_workspace_url_from_the_stack_outputs(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["metrics", "--target", "aks", "--stack", "aks-dev", "--project-dir", str(ROOT)]
    done = runner.invoke(app, base)
    assert done.exit_code != 0 and "Azure Monitor workspace" in done.output
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"prometheusQueryUrl": "http://127.0.0.1:1"}))
    done = runner.invoke(app, [*base, "--outputs", str(outputs)])
    assert done.exit_code != 0 and "cannot reach Prometheus at http://127.0.0.1:1" in done.output


def test_validate_target_aks_refuses_a_fractional_a10_with_the_reason(sample_repo: Path) -> None:
    repo = str(sample_repo)
    runner = CliRunner()
    base = ["validate", repo, "--target", "aks", "--project-dir", str(ROOT)]
    ok = runner.invoke(app, [*base, "--instance-type", "Standard_NV36ads_A10_v5"])
    assert ok.exit_code == 0, ok.output
    refused = runner.invoke(app, [*base, "--instance-type", "Standard_NV6ads_A10_v5"])
    assert refused.exit_code == 1
    assert "1/6 share of one NVIDIA A10" in refused.output
    assert "Standard_NC4as_T4_v3" in refused.output  # the size to use instead
