"""``tdk package --release s3://...`` through a faulty proxy in front of moto's real server: every
fault ends in a clear error in bounded time, with no manifest and no orphaned multipart upload
of ours, and a re-publish through the healthy endpoint completes the release."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.manifest import Manifest
from tests.faults.proxy import FaultProxy, Mode

runner = CliRunner(env={"COLUMNS": "200"})
MIB = 1024 * 1024
READ_TIMEOUT = 1.0
ATTEMPTS = 2
# Bound on the time to a clear error: every call may take ATTEMPTS x READ_TIMEOUT plus
# botocore's backoff (under a second per retry); the largest failing run makes a few such calls
# one after another. Generous for a 2-core machine, far below "forever".
BOUND_S = 30.0


@pytest.fixture
def s3(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    import boto3

    monkeypatch.setenv("TDK_S3_PART_SIZE", str(5 * MIB))
    monkeypatch.setenv("TDK_S3_READ_TIMEOUT", str(READ_TIMEOUT))
    monkeypatch.setenv("TDK_S3_CONNECT_TIMEOUT", "1")
    monkeypatch.setenv("TDK_S3_MAX_ATTEMPTS", str(ATTEMPTS))
    monkeypatch.delenv("TDK_S3_ENDPOINT_URL", raising=False)
    return boto3.client("s3", endpoint_url=moto_endpoint)


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"tdk-faults-{os.urandom(4).hex()}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def big_repo(sample_repo: Path, tmp_path: Path) -> Path:
    """The tokenizer with 12 MiB of incompressible weights: multipart (5 MiB parts) both as an
    archive and as a repository file."""
    repo = tmp_path / "repo"
    shutil.copytree(sample_repo / "tokenizer", repo / "tokenizer")
    (repo / "tokenizer" / "1" / "weights.bin").write_bytes(os.urandom(12 * MIB))
    return repo


def _package(repo: Path, url: str, endpoint: str) -> tuple[Any, float]:
    start = time.monotonic()
    result = runner.invoke(
        app, ["package", str(repo), "--release", url, "--s3-endpoint-url", endpoint, "--json"]
    )
    return result, time.monotonic() - start


def _uploads(s3: Any, bucket: str) -> list[str]:
    return [u["Key"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def _keys(s3: Any, bucket: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def _through(mode: Mode, limit: int, moto_endpoint: str) -> FaultProxy:
    return FaultProxy(int(moto_endpoint.rsplit(":", 1)[1]), mode, limit)


@pytest.mark.timeout(120)
def test_endpoint_dying_mid_upload_then_republish_cleans_our_multipart_uploads(
    s3: Any, bucket: str, big_repo: Path, moto_endpoint: str
) -> None:
    url = f"s3://{bucket}/releases/r1"
    with _through("die_after", 8 * MIB, moto_endpoint) as proxy:
        failed, elapsed = _package(big_repo, url, f"http://127.0.0.1:{proxy.port}")
    assert proxy.died.is_set()
    assert failed.exit_code == 1, failed.output
    assert "no manifest was written" in failed.output and url in failed.output
    assert elapsed < BOUND_S
    assert "releases/r1/manifest.json" not in _keys(s3, bucket)
    orphans = _uploads(s3, bucket)
    assert orphans, "the endpoint died before any multipart upload began"
    s3.create_multipart_upload(Bucket=bucket, Key="releases/r1/someone-elses.bin")

    again, _ = _package(big_repo, url, moto_endpoint)
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["manifest_written"] is True
    assert len(report["cleaned"]) == len(orphans)
    assert _uploads(s3, bucket) == ["releases/r1/someone-elses.bin"]  # not ours: untouched
    manifest = Manifest.from_json(
        s3.get_object(Bucket=bucket, Key="releases/r1/manifest.json")["Body"].read()
    )
    assert [m.target_model for m in manifest.models] == ["tokenizer-0.tar.gz"]


@pytest.mark.timeout(120)
def test_connections_cut_mid_part_abort_our_multipart_uploads_at_once(
    s3: Any, bucket: str, big_repo: Path, moto_endpoint: str
) -> None:
    """The endpoint stays up but every connection dies after 1 MiB: each part fails its retries,
    and the failed uploads are aborted right away (no re-publish needed)."""
    url = f"s3://{bucket}/releases/r1"
    with _through("cut_after", MIB, moto_endpoint) as proxy:
        failed, elapsed = _package(big_repo, url, f"http://127.0.0.1:{proxy.port}")
    assert failed.exit_code == 1, failed.output
    assert "no manifest was written" in failed.output
    assert elapsed < BOUND_S
    assert _uploads(s3, bucket) == []
    assert "releases/r1/manifest.json" not in _keys(s3, bucket)
    again, _ = _package(big_repo, url, moto_endpoint)
    assert again.exit_code == 0, again.output


@pytest.mark.timeout(120)
def test_endpoint_that_never_answers_fails_clearly_in_bounded_time(
    s3: Any, bucket: str, big_repo: Path, moto_endpoint: str
) -> None:
    url = f"s3://{bucket}/releases/r1"
    with _through("stall", 0, moto_endpoint) as proxy:
        failed, elapsed = _package(big_repo, url, f"http://127.0.0.1:{proxy.port}")
    assert failed.exit_code == 1, failed.output
    assert "Read timeout" in failed.output and url in failed.output
    assert "no answer in 2 attempt(s)" in failed.output and "TDK_S3_READ_TIMEOUT" in failed.output
    assert elapsed < ATTEMPTS * (READ_TIMEOUT + 1) + 5, elapsed
    assert _keys(s3, bucket) == [] and _uploads(s3, bucket) == []
