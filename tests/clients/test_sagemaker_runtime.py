"""`tdk invoke --target sagemaker` through boto3's real sagemaker-runtime client (moto server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from typer.testing import CliRunner

from cli.main import app
from tests.local.local_helpers import make_release


def test_invoke_sagemaker_decodes_the_endpoint_answer(
    moto_endpoint: str, sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_release(sample_repo, tmp_path, copies=1, only=("tokenizer",))
    answer = {
        "model_name": "tokenizer-0",
        "outputs": [
            {"name": "token_ids", "datatype": "INT32", "shape": [1, 3], "data": [1, 7, 9]},
            {"name": "attn_mask", "datatype": "INT32", "shape": [1, 3], "data": [1, 1, 1]},
        ],
    }
    queued = {"results": [{"Body": json.dumps(answer), "ContentType": "application/json"}]}
    requests.post(f"{moto_endpoint}/moto-api/static/sagemaker/endpoint-results", json=queued)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", moto_endpoint)
    args = ["invoke", "--target", "sagemaker", "--endpoint", "prod", "--region", "us-east-1"]
    args += ["--target-model", "tokenizer-0.tar.gz", "--release", str(tmp_path), "--text", "hi"]
    result = CliRunner().invoke(app, [*args, "--json-body", "--json"])
    assert result.exit_code == 0, result.output
    outputs = json.loads(result.output)["outputs"]
    assert outputs["token_ids"]["data"] == [[1, 7, 9]]
    assert outputs["attn_mask"]["shape"] == [1, 3]


def test_invoke_sagemaker_unknown_target_model_is_refused_locally(
    sample_repo: Path, tmp_path: Path
) -> None:
    make_release(sample_repo, tmp_path, copies=1, only=("tokenizer",))
    args = ["invoke", "--target", "sagemaker", "--endpoint", "prod", "--release", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--target-model", "../etc.tar.gz", "--text", "x"])
    assert result.exit_code == 1
    assert "not in this release" in result.output and "tokenizer-0.tar.gz" in result.output
