"""``--stack`` names the deployment: the target, the endpoint, the region and the release come
from the stack's config and, once deployed, its outputs; flags win; a contradiction is an error
naming both (issue 40, rows 1-3). SageMaker against moto, through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.cli.sagemaker_moto import create_mme_endpoint, moto_aws

ROOT = Path(__file__).resolve().parents[2]
#: a region no AWS default points at: only the stack file can have said it
STACK_REGION = "eu-west-1"
ENDPOINT = "tdk-sm-ops"


def _project(tmp: Path, name: str = ENDPOINT, release: str = "") -> Path:
    """A project holding the real Pulumi.yaml and a sagemaker stack ``ops``."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp / "Pulumi.yaml")
    text = (ROOT / "Pulumi.sagemaker-dev.yaml").read_text()
    text = text.replace("aws:region: us-east-1", f"aws:region: {STACK_REGION}")
    text = text.replace("name: tdk-sagemaker-dev", f"name: {name}")
    text = text.replace('releaseUrl: ""', f'releaseUrl: "{release}"')
    (tmp / "Pulumi.ops.yaml").write_text(text)
    return tmp


@pytest.fixture(scope="module")
def aws() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch, moto_aws(patch):
        patch.delenv("AWS_DEFAULT_REGION")
        patch.delenv("AWS_REGION", raising=False)
        patch.setenv("PATH", os.defpath)  # no pulumi CLI: the stack's config alone
        create_mme_endpoint(ENDPOINT, region=STACK_REGION)
        create_mme_endpoint("tdk-from-outputs", region=STACK_REGION)
        yield


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_endpoint_status_takes_target_endpoint_and_region_from_the_stack(
    aws: None, tmp_path: Path
) -> None:
    project = str(_project(tmp_path))
    code, output = _run("endpoint", "status", "--stack", "ops", "--project-dir", project, "--json")
    assert code == 0, output
    state = json.loads(output)
    assert (state["target"], state["endpoint"], state["status"]) == (
        "sagemaker",
        ENDPOINT,
        "InService",
    )


def test_metrics_with_a_stack_and_since_reads_cloudwatch_in_the_stacks_region(
    aws: None, tmp_path: Path
) -> None:
    project = str(_project(tmp_path))
    code, output = _run(
        "metrics", "--stack", "ops", "--project-dir", project, "--since", "1h", "--json"
    )
    assert code == 0, output
    figures = json.loads(output)
    assert (figures["target"], figures["endpoint"], figures["region"]) == (
        "sagemaker",
        ENDPOINT,
        STACK_REGION,
    )


def test_wait_with_a_stack(aws: None, tmp_path: Path) -> None:
    project = str(_project(tmp_path))
    code, output = _run(
        "endpoint", "wait", "--stack", "ops", "--project-dir", project, "--interval", "0.1"
    )
    assert code == 0, output
    assert f"{ENDPOINT}: InService" in output


def test_an_outputs_file_names_the_deployed_endpoint(aws: None, tmp_path: Path) -> None:
    project = _project(tmp_path)
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"endpointName": "tdk-from-outputs", "region": STACK_REGION}))
    code, output = _run(
        "endpoint", "status", "--stack", "ops", "--project-dir", str(project),
        "--outputs", str(outputs), "--json",
    )  # fmt: skip
    assert code == 0, output
    assert json.loads(output)["endpoint"] == "tdk-from-outputs"


def test_the_pulumi_cli_gives_the_outputs_when_installed(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "pulumi"
    fake.write_text(
        f'#!/bin/sh\necho "$@" > {tmp_path}/args\necho \'{{"endpointName": "tdk-from-outputs"}}\'\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.defpath}")
    code, output = _run("endpoint", "status", "--stack", "ops", "--project-dir", str(project))
    assert code == 0, output
    assert "tdk-from-outputs" in output
    args = (tmp_path / "args").read_text().split()
    assert args[:3] == ["stack", "output", "--json"] and "ops" in args


def test_a_flag_given_alongside_wins(aws: None, tmp_path: Path) -> None:
    """--region over the stack's region: the endpoint is not found there."""
    project = str(_project(tmp_path))
    code, output = _run(
        "endpoint", "status", "--stack", "ops", "--project-dir", project, "--region", "us-east-1"
    )
    assert code == 1
    assert f"describe endpoint {ENDPOINT}" in output


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--target", "gke"), ("--target gke", "--stack ops", "sagemaker")),
        (("--endpoint", "other"), ("--endpoint other", "--stack ops", ENDPOINT)),
    ],
)
@pytest.mark.parametrize("command", [("endpoint", "status"), ("metrics",), ("invoke",)])
def test_a_flag_contradicting_the_stack_is_an_error_naming_both(
    aws: None,
    tmp_path: Path,
    flags: tuple[str, str],
    named: tuple[str, ...],
    command: tuple[str, ...],
) -> None:
    project = str(_project(tmp_path))
    extra = ("--target-model", "m") if command == ("invoke",) else ()
    code, output = _run(*command, *extra, "--stack", "ops", "--project-dir", project, *flags)
    assert code == 2, output
    flat = " ".join(output.split())
    assert all(part in flat for part in named), flat


def test_invoke_reads_the_stacks_release_manifest(aws: None, tmp_path: Path) -> None:
    """The release comes from the stack's releaseUrl: invoke reads its manifest there."""
    project = str(_project(tmp_path, release="s3://tdk-no-such-bucket/releases/r9"))
    code, output = _run(
        "invoke", "--stack", "ops", "--project-dir", project, "--target-model", "m", "--text", "x"
    )
    assert code != 0
    assert "tdk-no-such-bucket" in output, output


def test_outputs_without_a_stack_is_refused(tmp_path: Path) -> None:
    outputs = tmp_path / "o.json"
    outputs.write_text("{}")
    code, output = _run("endpoint", "status", "--outputs", str(outputs))
    assert code == 2 and "--outputs needs --stack" in output


def test_an_unreadable_outputs_file_names_the_command_that_writes_it(
    aws: None, tmp_path: Path
) -> None:
    project = str(_project(tmp_path))
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    code, output = _run(
        "endpoint", "status", "--stack", "ops", "--project-dir", project, "--outputs", str(bad)
    )
    assert code == 2
    assert "pulumi stack output --json" in " ".join(output.split())
