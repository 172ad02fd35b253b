"""Credentials inside a URL (``s3://KEY:SECRET@bucket``, ``https://user:pass@host``) are never
echoed (issue 47 item 7): a store URL or store endpoint carrying them is refused with the URL
redacted, and every message, table, JSON document and the endpoint's log print a URL's
userinfo as ``***`` (``tdk.redact``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from packager.publish import publish
from packager.stores import open_store

runner = CliRunner()
SECRET = "wJalrXUtnFEMIK7MDENG"


def test_a_store_url_with_credentials_is_refused_without_echoing_them() -> None:
    for args in (
        ["--store", f"s3://AKIAEXAMPLE:{SECRET}@bucket/prefix"],
        ["--store", "s3://bucket/prefix", "--endpoint-url", f"http://minio:{SECRET}@127.0.0.1:9"],
        ["--store", f"gs://user:{SECRET}@bucket/prefix"],
    ):
        result = runner.invoke(app, ["releases", *args])
        assert result.exit_code != 0, result.output
        assert SECRET not in result.output and "***@" in result.output, result.output
        assert "carries no credentials" in result.output


def test_an_endpoint_url_with_credentials_is_printed_redacted(
    sample_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    manifest = publish([sample_repo / "tokenizer"], open_store(str(store)), 1).manifest
    url = f"https://user:{SECRET}@127.0.0.1:9"
    args = ["--url", url, "--release", str(store), "--example", "--json"]
    target = manifest.models[0].target_model
    result = runner.invoke(app, ["invoke", "--target", "gke", *args, "--target-model", target])
    assert result.exit_code != 0, result.output
    assert SECRET not in result.output and "https://***@127.0.0.1:9" in result.output


def test_the_endpoint_log_holds_no_credential() -> None:
    serve = [sys.executable, "-m", "infra.targets.local.serve"]
    done = subprocess.run(
        [*serve, "--release", f"s3://AKIAEXAMPLE:{SECRET}@bucket/r"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert SECRET not in done.stdout + done.stderr and "s3://***@bucket/r" in done.stderr
