"""`tdk invoke` and `tdk bench` against endpoints that misbehave (issue 18 items 5 and 6): a 200
whose body is not a Triton response is an error, and `--timeout` is a total deadline per
request, so silent and trickling servers end within it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.hostile.bad_servers import bad_server
from tests.local.local_helpers import make_release
from tests.registry_lists import kubernetes_targets

runner = CliRunner()
MODEL = "tokenizer-0.tar.gz"


@pytest.fixture(scope="module")
def store(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("release")
    make_release(sample_repo, folder, copies=1, only=("tokenizer",))
    return f"file://{folder}"


@pytest.fixture
def aws_at(monkeypatch: pytest.MonkeyPatch) -> object:
    """Point boto3's sagemaker-runtime client at ``url`` (placeholder credentials)."""

    def point(url: str) -> None:
        monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")

    return point


#: every Kubernetes target (Triton's own API at --url), and SageMaker's runtime API
KINDS = [*kubernetes_targets(), "sagemaker"]


def _target(kind: str, url: str, aws_at: object) -> list[str]:
    if kind in kubernetes_targets():
        return ["--target", kind, "--url", url]
    aws_at(url)  # type: ignore[operator]
    return ["--target", "sagemaker", "--endpoint", "ep"]


@pytest.mark.parametrize("kind", KINDS)
def test_invoke_garbage_body_is_an_error_without_traceback(
    kind: str, store: str, aws_at: object
) -> None:
    with bad_server("garbage") as url:
        args = ["invoke", "--target-model", MODEL, "--text", "hi", "--release", store]
        result = runner.invoke(app, [*args, *_target(kind, url, aws_at)])
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    assert "not a Triton inference response" in result.output
    assert "garbage" in result.output


@pytest.mark.parametrize("kind", KINDS)
def test_bench_counts_garbage_bodies_as_bad_responses(
    kind: str, store: str, aws_at: object
) -> None:
    with bad_server("garbage") as url:
        args = ["bench", "--target-model", MODEL, "--release", store, "-c", "2"]
        args += ["--duration", "0.3", "--json", *_target(kind, url, aws_at)]
        result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # every request failed: nothing was measured
    assert "every request failed" in result.stderr
    record = json.loads(result.stdout)
    [level] = record["levels"]
    assert level["ok"] == 0
    assert level["errors"]["bad_response"] > 0
    assert record["probe_errors"] == {"bad_response": 2}


@pytest.mark.parametrize("behaviour", ["silent", "trickle"])
@pytest.mark.parametrize("kind", KINDS)
def test_invoke_timeout_is_a_total_deadline(
    kind: str, behaviour: str, store: str, aws_at: object
) -> None:
    with bad_server(behaviour) as url:
        args = ["invoke", "--target-model", MODEL, "--text", "hi", "--release", store]
        started = time.monotonic()
        # 2 s: twice the trickle's pause between bytes, so only a total deadline can end it
        result = runner.invoke(app, [*args, "--timeout", "2", *_target(kind, url, aws_at)])
        elapsed = time.monotonic() - started
    assert result.exit_code != 0, result.output
    assert elapsed < 15, elapsed
    assert "within 2 s" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("behaviour", ["silent", "trickle"])
def test_bench_counts_timeouts_and_ends(behaviour: str, store: str) -> None:
    with bad_server(behaviour) as url:
        args = ["bench", "--target-model", MODEL, "--release", store, "-c", "2", "--json"]
        args += ["--duration", "0.5", "--timeout", "1", "--target", "gke", "--url", url]
        started = time.monotonic()
        result = runner.invoke(app, args)
        elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output  # every request failed
    assert elapsed < 15, elapsed
    record = json.loads(result.stdout)
    assert record["probe_errors"] == {"timeout": 2}
    assert record["levels"][0]["ok"] == 0
    assert record["levels"][0]["errors"]["timeout"] >= 2


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_timeout_must_be_a_positive_number(value: str, store: str) -> None:
    args = ["invoke", "--target-model", MODEL, "--text", "hi", "--release", store]
    result = runner.invoke(app, [*args, "--timeout", value, "--target", "gke", "--url", "x"])
    assert result.exit_code == 2, result.output
    assert "--timeout" in result.output
    assert "Traceback" not in result.output
