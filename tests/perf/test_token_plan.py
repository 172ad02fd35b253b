"""`tdk plan` on a token measurement takes the request plan's options (issue 38 item 7): peak and
traffic in requests/s at the measured sequence lengths, the fleet at the peak and trough sized by
the request plan's own arithmetic, `--latency-budget-ms` on p99 time to first token picking the
level, `--components` with MME refused for a streamed model, and MME refused as a target."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from cli.main import app
from infra.planning.report import units_for
from packager.manifest import Manifest, ManifestModel

runner = CliRunner()
PRICES = {
    "date": "2026-11-24",
    "ec2": {"us-east-1": {"g5.xlarge": {"usd_per_hour": "1.006", "source": "t"}}},
    "sagemaker": {"us-east-1": {"ml.g5.xlarge": {"usd_per_hour": "1.408", "source": "t"}}},
}


def _level(concurrency: int, rate: float, ttft_p99: float, **changes: Any) -> dict[str, Any]:
    # 20 requests of 20 output tokens each: 400 tokens, rate tok/s
    return {
        "mode": "concurrency", "level": concurrency, "requests": 20, "ok": 20, "errors": 0,
        "output_tokens": 400, "output_tokens_per_s": rate, "requests_per_s": rate / 20,
        "target": "eks", "instance_type": "g5.xlarge", "gpu": None, "model": "llm-0",
        "ttft_ms": {"p50": ttft_p99 / 2, "p90": ttft_p99 * 0.8, "p99": ttft_p99},
    } | changes  # fmt: skip


def _write(tmp_path: Path, document: Any, name: str = "bench.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    return str(path)


def _plan(tmp_path: Path, document: Any, *args: str) -> dict[str, Any]:
    bench = _write(tmp_path, document)
    prices = str(tmp_path / "prices.json")
    result = runner.invoke(app, ["plan", bench, "--prices", prices, "--json", *args])
    assert result.exit_code == 0, result.output
    parsed: dict[str, Any] = json.loads(result.output)
    return parsed


def _refused(tmp_path: Path, document: Any, *args: str) -> str:
    result = runner.invoke(app, ["plan", _write(tmp_path, document), *args])
    assert result.exit_code == 2, result.output
    return result.output


def test_peak_rps_sizes_the_fleet_as_the_request_plan_does(tmp_path: Path) -> None:
    # 100 requests/s x 20 tokens = 2000 tok/s; a unit at 0.5 of 250 tok/s: 16 GPUs, 16 g5.xlarge
    found = _plan(tmp_path, _level(4, 250.0, 80.0), "--peak-rps", "100")
    fleet = found["options"][0]["fleet"]
    assert fleet["peak_units"] == units_for(Decimal(2000), Decimal(250), Decimal("0.5")) == 16
    assert fleet["peak_instances"] == 16 and fleet["trough_units"] == 1
    assert fleet["peak_usd_per_hour"] == "16.10"  # 16 x 1.006
    traffic = found["traffic"]
    assert traffic["peak_rps"] == "100" and traffic["peak_output_tokens_per_s"] == "2000"
    assert traffic["output_tokens_per_request"] == "20"
    # the safety factor sizes the fleet too: at 1.0, 8 units
    full = _plan(tmp_path, _level(4, 250.0, 80.0), "--peak-rps", "100", "--safety-factor", "1")
    assert full["options"][0]["fleet"]["peak_units"] == 8
    bench = _write(tmp_path, _level(4, 250.0, 80.0))
    human = runner.invoke(app, ["plan", bench, "--prices", str(tmp_path / "prices.json"),
                                "--peak-rps", "100"], terminal_width=200)  # fmt: skip
    assert human.exit_code == 0, human.output
    assert "16/1" in human.output and "in output tokens" in human.output
    assert "peak 100 requests/s x 20 output tokens per request" in human.output


def test_traffic_profile_in_requests_sizes_peak_and_trough(tmp_path: Path) -> None:
    traffic = tmp_path / "traffic.csv"
    traffic.write_text("time,rps\n00:00,10\n01:00,100\n")
    found = _plan(tmp_path, _level(4, 250.0, 80.0), "--traffic", str(traffic))
    fleet = found["options"][0]["fleet"]
    assert (fleet["peak_units"], fleet["trough_units"]) == (16, 2)  # 2000 and 200 tok/s
    assert found["traffic"]["average_rps"] == "55"
    # $ per million output tokens at the average: (16 + 2) / 2 x 1.006 $/h over 1100 tok/s
    expected = (Decimal(9) * Decimal("1.006")) / (Decimal(1100) * 3600) * 1_000_000
    assert fleet["usd_per_million_output_tokens"] == str(expected.quantize(Decimal("0.0001")))


def test_the_latency_budget_picks_the_level_on_ttft_p99(tmp_path: Path) -> None:
    runs = {"runs": [_level(1, 100.0, 50.0), _level(4, 250.0, 120.0), _level(16, 400.0, 900.0),
                     _level(32, 500.0, 100.0, errors=2)]}  # fmt: skip
    tight = _plan(tmp_path, runs, "--latency-budget-ms", "200")
    assert tight["level"] == "concurrency 4" and tight["ttft_p99_ms"] == "120.0"
    assert tight["options"][0]["output_tokens_per_s"] == "250.0"
    loose = _plan(tmp_path, runs, "--latency-budget-ms", "1000")
    assert loose["level"] == "concurrency 16"  # the faster level with errors is never chosen
    none = _refused(tmp_path, runs, "--latency-budget-ms", "10")
    assert "no measured level has p99 time to first token <= 10 ms" in none
    unpicked = _refused(tmp_path, runs)
    assert "needs --latency-budget-ms" in unpicked
    single = _refused(tmp_path, _level(4, 250.0, 120.0), "--slo-ms", "100")
    assert "p99 time to first token <= 100 ms" in single


def test_mme_is_refused_for_a_streamed_model_with_the_reason(tmp_path: Path) -> None:
    found = _refused(tmp_path, _level(4, 250.0, 80.0), "--target", "sagemaker")
    assert "cannot serve decoupled models" in found and "TargetModel" in found
    assert "sagemaker_server.cc" in found
    # a measurement said to come from MME is never priced there, nor silently elsewhere
    other = _refused(tmp_path, _level(4, 250.0, 80.0, target="sagemaker",
                                      instance_type="ml.g5.xlarge"))  # fmt: skip
    assert "which cannot serve decoupled models" in other and "--target gke or eks" in other


def _release(tmp_path: Path, decoupled: bool) -> str:
    model = ManifestModel(
        "llm-0.tar.gz", "llm-0", "llm", 0, "", 10_000, "", "vllm", "", 0, (), (),
        mme_left_out="decoupled" if decoupled else "",
    )  # fmt: skip
    root = tmp_path / ("llm-release" if decoupled else "release")
    root.mkdir()
    manifest = Manifest((model,), "2026-11-27T00:00:00Z", "test")
    (root / "manifest.json").write_text(manifest.to_json())
    return f"file://{root}"


def test_components_price_a_token_load_and_refuse_mme(tmp_path: Path) -> None:
    release = _release(tmp_path, decoupled=True)
    args = ["--peak-rps", "100", "--components", release, "--instance-type", "ml.g5.xlarge",
            "--target", "eks", "--instance-type", "g5.xlarge"]  # fmt: skip
    rows = {r["option"]: r for r in _plan(tmp_path, _level(4, 250.0, 80.0), *args)[
        "components_vs_mme"]}  # fmt: skip
    components = rows["ml.g5.xlarge inference components"]
    assert components["instances_peak"] == 16 and components["usd_per_hour_peak"] == "22.53"
    mme = rows["ml.g5.xlarge MME"]
    assert mme["refused"] and mme["usd_per_hour_peak"] is None
    assert "decoupled" in mme["note"] and "TargetModel" in mme["note"]
    needs = _refused(tmp_path, _level(4, 250.0, 80.0), "--components", release)
    assert "no traffic given" in needs


def test_request_components_refuse_mme_for_a_decoupled_release(tmp_path: Path) -> None:
    level = {"mode": "concurrency", "level": 4, "throughput_rps": 300, "p50_ms": 10,
             "p90_ms": 30, "p99_ms": 45, "errors": {}}  # fmt: skip
    bench = {"target": "sagemaker", "instance_type": "ml.g5.xlarge", "gpu": None,
             "target_model": "llm-0.tar.gz", "levels": [level]}  # fmt: skip
    args = ["--peak-rps", "300", "--latency-budget-ms", "50", "--instance-type", "ml.g5.xlarge"]
    streamed = _plan(tmp_path, bench, *args, "--components", _release(tmp_path, True))
    mme = next(r for r in streamed["components_vs_mme"] if r["option"].endswith("MME"))
    assert mme["refused"] and "llm-0" in mme["note"] and mme["usd_per_million"] is None
    plain = _plan(tmp_path, bench, *args, "--components", _release(tmp_path, False))
    mme = next(r for r in plain["components_vs_mme"] if r["option"].endswith("MME"))
    assert not mme["refused"] and mme["usd_per_hour_peak"] == "2.82"  # 2 x 1.408


def test_a_bench_without_per_request_counts_cannot_take_requests(tmp_path: Path) -> None:
    older = _level(4, 250.0, 80.0)
    del older["output_tokens"]
    refused = _refused(tmp_path, older, "--peak-rps", "10")
    assert "output tokens per request" in refused


def test_a_measurement_on_a_target_that_cannot_plan_it_asks_for_the_target(
    tmp_path: Path,
) -> None:
    # bench --prompt on inference components: no silent GKE pricing of an ml.* type
    ic = _refused(tmp_path, _level(4, 250.0, 80.0, target="sagemaker-ic",
                                   instance_type="ml.g5.xlarge"))  # fmt: skip
    assert "taken on sagemaker-ic, which cannot plan" in ic and "--target gke or eks" in ic
    local = _refused(tmp_path, _level(4, 250.0, 80.0, target="local"))
    assert "taken on local" in local and "--target" in local
    chosen = _plan(tmp_path, _level(4, 250.0, 80.0, target="local"), "--target", "eks")
    assert not chosen["options"][0]["measured"]  # priced, and said to be assumed
