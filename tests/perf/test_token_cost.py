"""`tdk plan` on a `bench --prompt` measurement: cost per million output tokens beside an
Inferentia baseline, each number with its source."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from cli.main import app
from infra.perf.plan.token_cost import per_million

runner = CliRunner()


def _bench(tmp_path: Path, **changes: Any) -> Path:
    record = {
        "mode": "concurrency", "level": 4, "requests": 20, "ok": 20, "errors": 0,
        "output_tokens_per_s": 250.0, "target": "eks", "instance_type": "g5.xlarge",
        "gpu": None, "model": "llm-0",
        "ttft_ms": {"p50": 30.0, "p90": 40.0, "p99": 50.0},
    } | changes  # fmt: skip
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(record))
    return path


def test_per_million_arithmetic() -> None:
    # $1.006/h at 250 tok/s: 900,000 tokens an hour -> $1.1178 per million
    assert per_million(Decimal("1.006"), Decimal(250)) == Decimal("1.1178")


def test_plan_prices_tokens_beside_the_baseline(tmp_path: Path) -> None:
    args = ["plan", str(_bench(tmp_path)), "--region", "us-east-1", "--json"]
    result = runner.invoke(app, [*args, "--baseline", "inf2.xlarge:310tok/s:0.76"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    measured, base = document["options"]
    assert measured["name"] == "g5.xlarge" and measured["output_tokens_per_s"] == "250.0"
    # planned at the request plan's default utilisation (0.5), baseline included
    expected = per_million(Decimal(measured["usd_per_hour"]), Decimal(125))
    assert Decimal(measured["usd_per_million_output_tokens"]) == expected
    assert measured["source"].startswith("measured: ") and "prices" in measured["source"]
    assert measured["measured"] and measured["utilisation"] == "0.5"
    assert base["baseline"] and base["usd_per_million_output_tokens"] == str(
        per_million(Decimal("0.76"), Decimal(155))
    )
    assert "as given" in base["source"]
    human = runner.invoke(app, [*args[:-1], "--instance-type", "g6.xlarge"])
    assert human.exit_code == 0, human.output
    assert "assumed from" in human.output and "output tokens" in human.output


def test_baseline_price_from_the_table(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["plan", str(_bench(tmp_path)), "--baseline", "inf2.xlarge:310tok/s", "--json"]
    )
    assert result.exit_code == 0, result.output
    base = json.loads(result.output)["options"][-1]
    assert "aws.amazon.com" in base["source"] and Decimal(base["usd_per_hour"]) > 0


def test_bad_token_measurements_and_baselines_are_refused(tmp_path: Path) -> None:
    failed = runner.invoke(app, ["plan", str(_bench(tmp_path, errors=3))])
    assert failed.exit_code == 2 and "3 failed requests" in failed.output
    zero = runner.invoke(app, ["plan", str(_bench(tmp_path, output_tokens_per_s=0))])
    assert zero.exit_code == 2 and "output_tokens_per_s" in zero.output
    bad = runner.invoke(app, ["plan", str(_bench(tmp_path)), "--baseline", "inf2.xlarge:310rps"])
    assert bad.exit_code == 2 and "tok/s" in bad.output
    unknown = runner.invoke(app, ["plan", str(_bench(tmp_path, instance_type=None))])
    assert unknown.exit_code == 2 and "--instance-type" in unknown.output


def test_a_rate_bench_is_priced_at_its_load_and_says_so(tmp_path: Path) -> None:
    rated = _bench(tmp_path, mode="rate", level=2.5)
    result = runner.invoke(app, ["plan", str(rated), "--region", "us-east-1", "--json"])
    assert result.exit_code == 0, result.output
    note = json.loads(result.output)["note"]
    assert "offered rate of 2.5 requests/s" in note and "--concurrency" in note
    human = runner.invoke(app, ["plan", str(rated), "--region", "us-east-1"])
    assert human.exit_code == 0 and "not what the unit can" in human.output
    closed = runner.invoke(app, ["plan", str(_bench(tmp_path)), "--json"])
    assert closed.exit_code == 0 and json.loads(closed.output)["note"] is None


def _token_plan(tmp_path: Path, *args: str, **changes: Any) -> Any:
    bench = str(_bench(tmp_path, **changes))
    result = runner.invoke(app, ["plan", bench, "--region", "us-east-1", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["options"]


def test_the_safety_factor_sets_the_token_utilisation(tmp_path: Path) -> None:
    full = _token_plan(tmp_path, "--safety-factor", "1", "--baseline", "inf2.xlarge:310tok/s:0.76")
    unit, base = full
    assert unit["utilisation"] == "1" and Decimal(unit["usd_per_million_output_tokens"]) == (
        per_million(Decimal(unit["usd_per_hour"]), Decimal(250))
    )
    assert base["usd_per_million_output_tokens"] == str(per_million(Decimal("0.76"), Decimal(310)))
    quarter = _token_plan(tmp_path, "--safety-factor", "0.25")[0]
    assert Decimal(quarter["usd_per_million_output_tokens"]) == per_million(
        Decimal(unit["usd_per_hour"]), Decimal("62.5")
    )
    bad = runner.invoke(app, ["plan", str(_bench(tmp_path)), "--safety-factor", "1.5"])
    assert bad.exit_code == 2 and "--safety-factor" in bad.output and "0 < f <= 1" in bad.output


def test_a_local_run_tagged_with_an_instance_type_is_not_measured_there(tmp_path: Path) -> None:
    # a CPU run on the laptop, tagged g5.xlarge: the eks g5.xlarge row is a guess, said loudly
    row = _token_plan(tmp_path, "--target", "eks", target="local")[0]
    assert row["name"] == "g5.xlarge" and not row["measured"]
    assert row["source"].startswith("assumed from") and "local g5.xlarge" in row["source"]
    bench = str(_bench(tmp_path, target="local"))
    human = runner.invoke(app, ["plan", bench, "--target", "eks"], terminal_width=400)
    assert human.exit_code == 0, human.output
    assert "NOT MEASURED" in human.output and "local g5.xlarge" in human.output
    same = _token_plan(tmp_path, "--target", "eks")[0]
    assert same["measured"] and same["source"].startswith("measured: ")


def test_request_only_options_are_refused_on_tokens_not_ignored(tmp_path: Path) -> None:
    # peak, traffic, budget and components are planned on tokens (test_token_plan.py); the
    # stack's scaling keys and the plot are in requests: refused, never ignored
    bench = str(_bench(tmp_path))
    stack = tmp_path / "Pulumi.eks-dev.yaml"
    for option in (["--plot", str(tmp_path / "p.png")], ["--write-stack", str(stack)]):
        result = runner.invoke(app, ["plan", bench, *option])
        assert result.exit_code == 2, (option, result.output)
        assert "token" in result.output and "drop" in result.output, result.output
    assert not (tmp_path / "p.png").exists() and not stack.exists()


def test_input_tokens_are_costed_with_the_output_tokens(tmp_path: Path) -> None:
    # 20 requests of 30 prompt words, 400 output tokens: 1.5 input tokens per output token
    metrics = {"input_sequence_length": {"avg": 30.0}}
    row = _token_plan(tmp_path, "--safety-factor", "1", ok=20, output_tokens=400, metrics=metrics)
    price = Decimal(row[0]["usd_per_hour"])
    assert row[0]["usd_per_million_input_and_output_tokens"] == str(
        per_million(price, Decimal(250) * Decimal("2.5"))
    )
    older = _token_plan(tmp_path)[0]  # a bench without input lengths: unknown, not zero
    assert older["usd_per_million_input_and_output_tokens"] is None
