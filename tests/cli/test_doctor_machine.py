"""``tdk doctor`` on the user's machine (issue 27): tools and versions, the Pulumi backend,
each cloud's credentials without a network call, per cloud what works and what to fix, and the
placeholder values left in the stacks; ``validate --stack`` and ``render k8s`` warn on them."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.facts.machine import Needs, cloud_summary, survey
from infra.placeholders import scan_stack, why
from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]
#: each target's cloud is the one its registry entry gives (``TargetEntry.cloud``)
AWS = Needs("eks-dev", "eks", registry.get("eks").cloud, True)
GKE = Needs("gke-dev", "gke", registry.get("gke").cloud, True)


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("my-gcp-project", True),
        ("ops@example.com", True),
        ("203.0.113.0/24", True),
        ("10.0.0.0/8,198.51.100.7/32", True),
        ("2001:db8::/48", True),
        ("https://github.com/<your-org>/models", True),
        ("alerts@team.example", True),
        ("gs://my-tdk-releases/releases/v1", True),
        ("ops@acme.io", False),
        ("172.16.0.32/28", False),
        ("gs://acme-releases/v1", False),
        ("ml.g5.xlarge", False),
        ("us-central1-a,us-central1-b", False),
        ("", False),
    ],
)
def test_placeholder_detector(value: str, placeholder: bool) -> None:
    assert bool(why(value)) is placeholder, (value, why(value))


def test_committed_stacks_hold_the_placeholders_the_issue_names() -> None:
    gke = {p.key: p.value for p in scan_stack(ROOT, "gke-dev")}
    assert gke["gcp:project"] == "my-gcp-project"
    assert gke["triton-deploy-kit:gkeAuthorizedNetworks"] == "203.0.113.0/24"
    assert gke["triton-deploy-kit:alertEmail"] == "ops@example.com"
    assert "gcp:region" not in gke


def _tool(folder: Path, name: str, says: str) -> None:
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{says}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def _nothing(name: str) -> str | None:
    return None


def test_a_bare_machine_is_not_ready_and_says_what_to_fix(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    checks = survey([AWS, GKE], env=env, which=_nothing)
    status = {(c.scope, c.check): c.status for c in checks}
    assert status[("tools", "pulumi")] == status[("tools", "kubectl")] == "missing"
    assert status[("tools", "helm")] == "optional"
    assert status[("pulumi", "state backend")] == "missing"
    assert status[("aws", "credentials")] == status[("gcp", "credentials")] == "missing"
    pulumi = next(c for c in checks if c.check == "pulumi")
    assert "not on PyPI" in pulumi.fix and "eks-dev" in pulumi.value
    summary = {row[0]: row for row in cloud_summary([AWS, GKE], checks)}
    assert summary["aws"][1] == summary["gcp"][1] == "not ready"
    assert "aws credentials" in summary["aws"][3] and "gcp credentials" not in summary["aws"][3]


def test_a_set_up_machine_is_ready_without_a_network_call(tmp_path: Path) -> None:
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_access_key_id = x\n")
    adc = tmp_path / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text("{}")
    (tmp_path / ".pulumi").mkdir()
    (tmp_path / ".pulumi" / "credentials.json").write_text(
        json.dumps({"current": f"file://{tmp_path}/state"})
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, says in (("pulumi", "v3.200.0"), ("kubectl", "Client Version: v1.34.1")):
        _tool(bin_dir, name, says)
    _tool(bin_dir, "aws", "aws-cli/2.30.0")
    _tool(bin_dir, "gcloud", "Google Cloud SDK 540.0.0")

    def which(name: str) -> str | None:
        path = bin_dir / name
        return str(path) if path.exists() else None

    env = {"HOME": str(tmp_path)}
    no_passphrase = survey([AWS, GKE], env=env, which=which)
    backend = next(c for c in no_passphrase if c.check == "state backend")
    assert backend.status == "missing" and "PULUMI_CONFIG_PASSPHRASE" in backend.fix
    checks = survey([AWS, GKE], env={**env, "PULUMI_CONFIG_PASSPHRASE": ""}, which=which)
    versions = {c.check: c.value for c in checks if c.scope == "tools"}
    assert versions["pulumi"] == "v3.200.0" and versions["kubectl"] == "Client Version: v1.34.1"
    assert all(c.status in ("ok", "optional") for c in checks), checks
    assert {row[1] for row in cloud_summary([AWS, GKE], checks)} == {"ready"}


def test_the_pulumi_programs_packages_are_checked(tmp_path: Path) -> None:
    """`make demo` installs the kit without its infra extra: `pulumi preview` would fail on its
    first import, so doctor names the missing packages and the one command."""
    import tomllib

    from infra.facts import INFRA_EXTRA_INSTALL
    from infra.facts.machine import program_requirements

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [
        re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in extra["optional-dependencies"]["infra"]
    ]
    assert program_requirements() == wanted
    env = {"HOME": str(tmp_path)}
    checks = survey([AWS], env=env, which=_nothing, is_installed=lambda name: name == "pulumi")
    [program] = [c for c in checks if c.check == "program packages"]
    assert program.status == "missing" and "pulumi-aws" in program.value
    assert "pulumi," not in program.value and INFRA_EXTRA_INSTALL in program.fix
    [aws] = cloud_summary([AWS], checks)
    assert aws[1] == "not ready" and "pulumi program packages" in aws[3]
    everything = survey([AWS], env=env, which=_nothing, is_installed=lambda name: True)
    assert next(c for c in everything if c.check == "program packages").status == "ok"


def test_a_missing_sagemaker_core_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from infra.facts import INFRA_EXTRA_INSTALL
    from infra.facts import triton as tf
    from tdk.errors import ConfigError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "sagemaker" else real(name)
    )
    with pytest.raises(ConfigError) as raised:
        tf.sagemaker_image_versions()
    assert raised.value.hint is not None and INFRA_EXTRA_INSTALL in raised.value.hint


def test_a_named_key_file_that_is_missing_is_reported(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "k.json")}
    [gcp] = [c for c in survey([GKE], env=env, which=_nothing) if c.scope == "gcp"]
    assert gcp.status == "missing" and "does not exist" in gcp.value


def test_doctor_reports_machine_clouds_and_placeholders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # none of the tools
    for name in [n for n in os.environ if n.startswith(("AWS_", "GOOGLE_", "PULUMI_"))]:
        monkeypatch.delenv(name)
    args = ["doctor", "--project-dir", str(ROOT), "--stack", "gke-dev"]
    document = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert [c["status"] for c in document["clouds"]] == ["not ready"]
    keys = {p["key"] for p in document["placeholders"]["gke-dev"]}
    assert {"gcp:project", "triton-deploy-kit:gkeAuthorizedNetworks"} <= keys
    shown = CliRunner(env={"COLUMNS": "100"}).invoke(app, args)
    assert "gcp: not ready for gke-dev" in shown.stdout
    assert "my-gcp-project" in shown.stdout and "gkeAuthorizedNetworks" in shown.stdout


def test_doctor_prints_the_facts_every_stack_shares_once() -> None:
    """Four stacks printed the same botocore / sagemaker-core / price rows four times (279
    lines at 100 columns), burying what is missing; shared rows now come once."""
    args = ["doctor", "--project-dir", str(ROOT), "-s", "eks-dev", "-s", "gke-dev"]
    document = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    shown = CliRunner(env={"COLUMNS": "250"}).invoke(app, args).stdout
    facts = {s: {f["fact"] for f in found} for s, found in document["stacks"].items()}
    both = facts["eks-dev"] & facts["gke-dev"]
    assert "list prices" in both and "keda chart (release channel)" in facts["gke-dev"] - both
    assert "every stack (eks-dev, gke-dev) as of" in shown
    for fact in both:
        assert shown.count(f" {fact} ") == 1, (fact, shown)
    for fact in (facts["eks-dev"] | facts["gke-dev"]) - both:
        assert f" {fact} " in shown, fact


def test_validate_stack_and_render_warn_on_placeholders(sample_repo: Path, tmp_path: Path) -> None:
    args = ["validate", str(sample_repo), "--stack", "gke-dev", "--project-dir", str(ROOT)]
    checked = CliRunner().invoke(app, args)
    assert "placeholder values" in checked.stderr and "my-gcp-project" in checked.stderr
    render = ["render", "k8s", "--stack", "gke-dev", "--project-dir", str(ROOT)]
    rendered = CliRunner().invoke(app, [*render, "--out", str(tmp_path / "k8s")])
    assert rendered.exit_code == 0, rendered.output
    assert "my-gcp-project" in rendered.stderr and "in the manifests" in rendered.stderr
