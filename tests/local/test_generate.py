"""The sample LLM on the real local endpoint: generate / generate_stream through the front,
`tdk invoke --prompt`, and the SageMaker MME call of the decoupled model refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clients.base import InvokeFailed
from infra.clients.generate import GenerateClient
from tests.local.local_helpers import Endpoint
from tests.registry_lists import kubernetes_targets

pytestmark = pytest.mark.e2e
runner = CliRunner()
INVOKE = ["invoke", "--target-model", "llm-0.tar.gz", "--prompt", "hello there"]


@pytest.fixture()
def cli_env(llm_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> Endpoint:
    monkeypatch.setenv("TDK_STATE_DIR", str(llm_endpoint.state_dir))
    return llm_endpoint


def test_invoke_stream_json(cli_env: Endpoint) -> None:
    result = runner.invoke(app, [*INVOKE, "--stream", "--max-tokens", "5", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert set(document) == {"text", "chunks", "output_tokens", "ttft_ms", "total_ms"}
    assert document["chunks"] == document["output_tokens"] == 5
    assert 0 < document["ttft_ms"] < document["total_ms"]
    whole = runner.invoke(app, [*INVOKE, "--max-tokens", "5", "--json"])
    assert whole.exit_code == 0, whole.output
    assert json.loads(whole.output)["text"] == document["text"]  # deterministic, same tokens
    assert len(document["text"].split()) == 5


def test_invoke_stream_prints_tokens(cli_env: Endpoint) -> None:
    result = runner.invoke(app, [*INVOKE, "--stream", "--max-tokens", "3"])
    assert result.exit_code == 0, result.output
    text = GenerateClient(cli_env.url, "llm-0").generate("hello there", 3, False).text
    assert text in result.output and "3 chunks" in result.output and "TTFT" in result.output


def test_generate_by_target_model_name_and_errors(llm_endpoint: Endpoint) -> None:
    by_archive = GenerateClient(llm_endpoint.url, "llm-0.tar.gz").generate("x", 2, True)
    assert by_archive.chunks == 2 and len(by_archive.chunk_ms) == 2
    with pytest.raises(InvokeFailed, match="answered 404") as unknown:
        GenerateClient(llm_endpoint.url, "nope-0").generate("x", 2, True)
    assert "nope-0" in str(unknown.value)
    refused = runner.invoke(
        app,
        ["invoke", "--target-model", "llm-0", "--prompt", "x", "--max-tokens", "9999"],
        env={"TDK_STATE_DIR": str(llm_endpoint.state_dir)},
    )
    assert refused.exit_code != 0 and "max_tokens 9999" in refused.output


def test_prompt_refuses_tensor_options(cli_env: Endpoint) -> None:
    result = runner.invoke(app, [*INVOKE, "--text", "x"])
    assert result.exit_code == 2 and "--text" in result.output
    alone = runner.invoke(app, ["invoke", "--target-model", "llm-0", "--stream"])
    assert alone.exit_code == 2 and "--prompt" in alone.output
    bench = ["bench", "generate", "--target-model", "llm-0", "--prompt", "x",
             "--arrival", "poisson"]  # fmt: skip
    poisson = runner.invoke(app, bench)  # arrivals belong to an open loop (--rate)
    assert poisson.exit_code == 2 and "--arrival poisson applies to an open loop" in poisson.output
    slo = runner.invoke(app, ["bench", "generate", "--target-model", "llm-0", "--prompt", "x",
                              "--goodput", "ttft:5"])  # fmt: skip
    assert slo.exit_code == 2 and "time_to_first_token" in slo.output
    old = runner.invoke(app, [*bench[:1], *bench[2:]])  # the earlier spelling: bench --prompt
    assert old.exit_code == 2 and "--arrival poisson applies to an open loop" in old.output
    assert "tdk bench --prompt is now tdk bench generate --prompt" in old.output
    unprompted = runner.invoke(app, ["bench", "generate", "--target-model", "llm-0"])
    assert (
        unprompted.exit_code == 2 and "needs --prompt TEXT or --prompts FILE" in unprompted.output
    )
    tensor = runner.invoke(app, ["bench", "generate", "--target-model", "llm-0", "--example"])
    assert tensor.exit_code == 2 and "--example" in tensor.output  # no such option there
    for tensors in (["invoke", "--text", "x"], ["invoke", "--example"], ["bench", "--example"]):
        refused = runner.invoke(app, [*tensors, "--target-model", "llm-0"])
        assert refused.exit_code == 2 and "is a decoupled (streaming) model" in refused.output
        assert "--prompt" in refused.output


def test_mme_invoke_of_decoupled_model_is_refused(llm_endpoint: Endpoint) -> None:
    from botocore.exceptions import ClientError

    body = json.dumps(
        {"inputs": [{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": ["hi"]}]}
    )
    with pytest.raises(ClientError) as refused:
        llm_endpoint.client().invoke_endpoint(
            EndpointName="local",
            TargetModel="llm-0.tar.gz",
            ContentType="application/json",
            Body=body,
        )
    error = refused.value.response["Error"]
    assert error["Code"] == "ModelError"
    assert "decoupled" in error["Message"]
    # SageMaker names a 5xx from the container a server error, a 4xx a client error
    details: dict[str, Any] = dict(refused.value.response)
    status = details["OriginalStatusCode"]
    side = "client" if status < 500 else "server"
    assert error["Message"].startswith(f"Received {side} error ({status}) from model llm-0.tar.gz")


def test_bench_prompt_json(cli_env: Endpoint, tmp_path: Path) -> None:
    bench = ["bench", "generate", "--target-model", "llm-0", "--prompt", "tell me"]
    bench += ["--max-tokens", "4"]
    runs_on = ["--instance-type", "g5.xlarge"]
    result = runner.invoke(app, [*bench, "-c", "2", "--requests", "6", *runs_on, "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["errors"] == 0 and record["ok"] == 6
    for key in ("ttft_ms", "tpot_ms", "e2e_ms"):
        assert set(record[key]) == {"p50", "p90", "p99"}
        assert all(value > 0 for value in record[key].values())
    assert record["ttft_ms"]["p50"] < record["e2e_ms"]["p50"]
    assert record["output_tokens"] == 24 and record["output_tokens_per_s"] > 0
    metrics = record["metrics"]
    for key in ("time_to_first_token", "inter_token_latency", "request_latency"):
        assert set(metrics[key]) == {"avg", "min", "max", "std", "p50", "p90", "p99"}
    assert metrics["output_sequence_length"]["avg"] == 4.0 and metrics["goodput"] is None
    human = runner.invoke(app, [*bench, "--rate", "20", "--requests", "3"])
    assert human.exit_code == 0 and "time to first token" in human.output
    assert "0 errors" in human.output
    csv = tmp_path / "levels.csv"
    levels = [*bench, "-c", "1,2", "--requests", "4", "--goodput", "time_to_first_token:60000"]
    swept = runner.invoke(app, [*levels, "--csv", str(csv), "--json"])
    assert swept.exit_code == 0, swept.output
    runs = json.loads(swept.output)["runs"]
    assert [r["level"] for r in runs] == [1, 2]
    assert all(r["metrics"]["goodput"] == r["metrics"]["request_throughput"] for r in runs)
    rows = csv.read_text().splitlines()
    assert rows[0] == "mode,level,metric,avg,min,max,std,p50,p90,p99,value"
    assert any(row.startswith("concurrency,2,time_to_first_token,") for row in rows)
    poisson = [*bench, "--rate", "20", "--arrival", "poisson", "--requests", "4", "--json"]
    arrivals = runner.invoke(app, poisson)
    assert arrivals.exit_code == 0, arrivals.output
    opened = json.loads(arrivals.output)
    assert opened["arrival"] == "poisson" and opened["mode"] == "rate"
    assert opened["ok"] == opened["sent"] == 4 and opened["errors"] == 0
    measured = tmp_path / "bench.json"
    measured.write_text(result.output)
    plan = ["plan", str(measured), "--target", "eks", "--baseline", "inf2.xlarge:300tok/s:0.76"]
    priced = runner.invoke(app, [*plan, "--json"])
    assert priced.exit_code == 0, priced.output
    names = [option["name"] for option in json.loads(priced.output)["options"]]
    assert names == ["g5.xlarge", "inf2.xlarge (baseline)"]


@pytest.mark.parametrize("target", kubernetes_targets())
def test_invoke_prompt_on_kubernetes_targets_with_url(llm_endpoint: Endpoint, target: str) -> None:
    """gke/eks reach Triton's generate routes at --url (here the local endpoint, which serves
    the same routes); the model is named through the release at --release."""
    where = ["--target", target, "--url", llm_endpoint.url, "--release", str(llm_endpoint.store)]
    args = ["invoke", *where, "--target-model", "llm-0.tar.gz", "--prompt", "hi", "--stream"]
    result = runner.invoke(app, [*args, "--max-tokens", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["chunks"] == 2
    missing = runner.invoke(app, ["invoke", "--target", target,
                                  "--release", str(llm_endpoint.store),
                                  "--target-model", "llm-0", "--prompt", "hi"])  # fmt: skip
    assert missing.exit_code == 2 and "--url" in missing.output


def test_inference_component_response_stream(llm_endpoint: Endpoint) -> None:
    """sagemaker-ic's generate client (InvokeEndpointWithResponseStream with the component's
    name) against the local twin: SageMaker's event stream, one PayloadPart per response."""
    from infra.targets.sagemaker_ic.stream import ComponentGenerateClient
    from packager.manifest import MANIFEST_NAME, Manifest

    manifest = Manifest.from_json((llm_endpoint.store / MANIFEST_NAME).read_bytes())
    [model] = [m for m in manifest.models if m.name == "llm-0"]
    runtime = llm_endpoint.client()
    seen: list[str] = []
    streamed = ComponentGenerateClient(runtime, "local", model).generate("hi", 4, True, seen.append)
    assert streamed.chunks == streamed.output_tokens == len(seen) == 4
    assert 0 < streamed.ttft_ms < streamed.total_ms
    assert streamed.text == GenerateClient(llm_endpoint.url, "llm-0").generate("hi", 4, True).text
    with pytest.raises(InvokeFailed, match="max_tokens 9999"):
        ComponentGenerateClient(runtime, "local", model).generate("hi", 9999, True)
    unknown = replace(model, name="nope-0")
    with pytest.raises(InvokeFailed, match="'nope-0' is not in the release") as caught:
        ComponentGenerateClient(runtime, "local", unknown).generate("hi", 2, True)
    assert caught.value.code == "ValidationError"
