"""The first sagemaker-ic deploy as docs/sagemaker.md writes it, run in that order (issue 37,
item 1): the real program under Pulumi mocks, the release in a moto S3 server.

Components are created with CopyCount >= 1, and a copy whose archive is missing fails to load,
so no component is declared until the stack names a published release."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from cli.main import app
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack

ROOT = Path(__file__).resolve().parents[2]
STACK = "sagemaker-ic-dev"
COMPONENT = "aws-native:sagemaker:InferenceComponent"
MODEL = "aws:sagemaker/model:Model"
BUCKET = "aws:s3/bucket:Bucket"
PREFIX = "triton-deploy-kit:"


def walkthrough() -> list[list[str]]:
    """The commands of the sagemaker-ic Deploy block of docs/sagemaker.md, in order."""
    text = (ROOT / "docs/sagemaker.md").read_text()
    section = text[text.index("## SageMaker inference components") :]
    block = re.search(r"### Deploy\n.*?```bash\n(.*?)```", section, re.S)
    assert block is not None
    lines = block.group(1).replace("\\\n", " ").splitlines()
    return [shlex.split(line, comments=True) for line in lines if line.strip()]


@pytest.fixture
def s3(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    return boto3.client("s3", region_name="us-east-1")


def _nothing_declared(run: StackRun) -> None:
    assert not run.of_type(COMPONENT) and not run.of_type(MODEL)
    assert run.one("aws:sagemaker/endpoint:Endpoint")


def test_the_walkthrough_runs_in_the_order_written(s3: Any, sample_repo: Path) -> None:
    steps = walkthrough()
    assert [s[:2] for s in steps[:6]] == [
        ["pulumi", "stack"], ["pulumi", "up"], ["RELEASE=$(pulumi", "stack"],
        ["tdk", "package"], ["pulumi", "config"], ["pulumi", "up"],
    ]  # fmt: skip
    overrides: dict[str, Any] = {}
    release = ""
    runs: list[StackRun] = []
    for step in steps:
        step = [word.replace("$RELEASE", release) for word in step]
        if step[:2] == ["pulumi", "up"]:
            runs.append(run_stack(STACK, overrides))
            if len(runs) == 1:  # what the first `pulumi up` created: the empty bucket
                release = runs[0].outputs["releaseUrl"]
                s3.create_bucket(Bucket=release.split("/")[2])
        elif step[:2] == ["pulumi", "config"]:
            assert step[2] == "set" and step[3].startswith(PREFIX)
            overrides[step[3].removeprefix(PREFIX)] = step[4]
        elif step[:2] == ["tdk", "package"]:
            args = [str(sample_repo) if a == "model_repos/samples" else a for a in step[2:]]
            done = CliRunner().invoke(app, ["package", *args])
            assert done.exit_code == 0, done.output
    first, second = runs
    _nothing_declared(first)
    assert first.outputs["nextStep"].startswith(f"tdk package MODEL_REPO --release {release} && ")
    assert f"triton-deploy-kit:releaseUrl {release} " in first.outputs["nextStep"]
    components = {c.inputs["inferenceComponentName"] for c in second.of_type(COMPONENT)}
    assert components == {"text-pipeline-0", "text-classifier-0", "image-classifier-0"}
    urls = {m.inputs["primaryContainer"]["modelDataUrl"] for m in second.of_type(MODEL)}
    assert all(url.startswith(f"{release}/mme/") for url in urls) and len(urls) == 3
    assert "nextStep" not in second.outputs
    # releaseUrl names the bucket the first up created: the stack keeps it
    [bucket] = second.of_type(BUCKET)
    assert release.split("/")[2].startswith(bucket.inputs["bucketPrefix"])


def test_an_empty_named_release_declares_no_component_and_says_what_to_run(s3: Any) -> None:
    s3.create_bucket(Bucket="tdk-empty-release")
    url = "s3://tdk-empty-release/releases/r1"
    run = run_stack(STACK, {"releaseUrl": url})
    _nothing_declared(run)
    assert run.outputs["nextStep"] == (
        f"tdk package MODEL_REPO --release {url} && pulumi up -s {STACK}"
    )


def test_a_published_release_declares_its_copies_in_one_up(s3: Any, sample_repo: Path) -> None:
    s3.create_bucket(Bucket="tdk-published")
    url = "s3://tdk-published/releases/r1"
    done = CliRunner().invoke(app, ["package", str(sample_repo), "--copies", "1", "--release", url])
    assert done.exit_code == 0, done.output
    run = run_stack(STACK, {"releaseUrl": url})
    assert len(run.of_type(COMPONENT)) == 3 and "nextStep" not in run.outputs


def test_the_old_release_key_still_works_and_warns(
    s3: Any, sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sagemakerIcManifestUrl is a deprecated alias of releaseUrl for one release."""
    import pulumi

    said: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: said.append(message))
    s3.create_bucket(Bucket="tdk-old-key")
    url = "s3://tdk-old-key/releases/r1"
    done = CliRunner().invoke(app, ["package", str(sample_repo), "--copies", "1", "--release", url])
    assert done.exit_code == 0, done.output
    run = run_stack(STACK, {"sagemakerIcManifestUrl": url})
    assert run.error is None and len(run.of_type(COMPONENT)) == 3
    old, new = f"{PREFIX}sagemakerIcManifestUrl", f"{PREFIX}releaseUrl"
    assert f"{old} is deprecated: use {new} (the old key goes in the next release)" in said
    assert run_stack(STACK, {"sagemakerIcManifestUrl": url, "releaseUrl": url}).error is None


def test_the_old_and_new_release_keys_naming_two_releases_are_refused() -> None:
    overrides = {
        "releaseUrl": "s3://tdk-new/releases/r2",
        "sagemakerIcManifestUrl": "s3://tdk-old/releases/r1",
    }
    run = run_stack(STACK, overrides, expect_error=True)
    assert isinstance(run.error, ConfigError) and not run.of_type(COMPONENT)
    assert f"{PREFIX}releaseUrl is 's3://tdk-new/releases/r2'" in run.error.message
    assert f"the deprecated {PREFIX}sagemakerIcManifestUrl is 's3://tdk-old" in run.error.message
    assert f"pulumi config rm {PREFIX}sagemakerIcManifestUrl" in (run.error.hint or "")
