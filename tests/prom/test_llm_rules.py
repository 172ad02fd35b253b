"""LLM stacks: TTFT / e2e alert rules and the KEDA engine-metric queries, checked and unit-tested
with ``promtool`` on series named as Triton, vLLM and TensorRT-LLM export them."""

from __future__ import annotations

from pathlib import Path

import yaml

from infra.k8s import promql
from infra.k8s.alerts import alert_rules, rules_yaml
from tests.prom.tools import promtool

HERE = Path(__file__).parent
NAMESPACE, JOB = "triton", "tdk-llm"


def _rules(engines: tuple[str, ...]) -> str:
    rules = alert_rules(NAMESPACE, JOB, 20000, 2.0, 2.0, engines=engines, ttft_slo_ms=500)
    return rules_yaml(rules)


def test_llm_rules_pass_promtool_check(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(_rules(("vllm", "tensorrtllm")))
    checked = promtool("check", "rules", tmp_path / "rules.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    names = [r["alert"] for r in yaml.safe_load(_rules(("vllm",)))["groups"][0]["rules"]]
    assert names[-2:] == ["triton-ttft-slo", "vllm-e2e-slo"]
    assert "vllm-e2e-slo" not in _rules(("tensorrtllm",))
    assert "triton-ttft-slo" not in _rules(())


def _scaling_tests() -> list[dict[str, object]]:
    """promql_expr_test cases: the KEDA queries evaluated on engine series."""
    vllm = {t.name: t.query for t in promql.engine_triggers(NAMESPACE, JOB, ("vllm",))}
    trt = {t.name: t.query for t in promql.engine_triggers(NAMESPACE, JOB, ("tensorrtllm",))}
    sel = f'namespace="{NAMESPACE}",job="{JOB}"'
    return [
        {
            "interval": "1m",
            "input_series": [
                # 2 requests/s (120 a minute) spending 4 s each: 8 in flight (Little's law)
                {
                    "series": f'vllm:e2e_request_latency_seconds_sum{{{sel},pod="a"}}',
                    "values": "0+480x5",
                },
                # first tokens: 90% within 0.25 s, the rest within 0.5 s -> p90 = 0.25 s
                {
                    "series": f'vllm:time_to_first_token_seconds_bucket{{{sel},pod="a",le="0.1"}}',
                    "values": "0+0x5",
                },
                {
                    "series": f'vllm:time_to_first_token_seconds_bucket{{{sel},pod="a",le="0.25"}}',
                    "values": "0+108x5",
                },
                {
                    "series": f'vllm:time_to_first_token_seconds_bucket{{{sel},pod="a",le="0.5"}}',
                    "values": "0+120x5",
                },
                {
                    "series": f'vllm:time_to_first_token_seconds_bucket{{{sel},pod="a",le="+Inf"}}',
                    "values": "0+120x5",
                },
                {
                    "series": f'nv_trt_llm_request_metrics{{{sel},pod="a",request_type="waiting"}}',
                    "values": "6x5",
                },
                {
                    "series": f'nv_trt_llm_request_metrics{{{sel},pod="a",request_type="active"}}',
                    "values": "60x5",
                },
                {
                    "series": f'nv_trt_llm_kv_cache_block_metrics{{{sel},pod="a",'
                    'kv_cache_block_type="used"}',
                    "values": "300x5",
                },
                {
                    "series": f'nv_trt_llm_kv_cache_block_metrics{{{sel},pod="a",'
                    'kv_cache_block_type="max"}',
                    "values": "1000x5",
                },
            ],
            "promql_expr_test": [
                {"expr": vllm["vllm-in-flight"], "eval_time": "4m", "exp_samples": [{"value": 8}]},
                {"expr": vllm["vllm-ttft"], "eval_time": "4m", "exp_samples": [{"value": 0.25}]},
                {"expr": trt["trtllm-waiting"], "eval_time": "4m", "exp_samples": [{"value": 6}]},
                {
                    "expr": trt["trtllm-kv-cache"],
                    "eval_time": "4m",
                    "exp_samples": [{"value": 0.3}],
                },
            ],
        },
        {  # no engine series yet, or idle (no observations): KEDA reads 0, not "no data"/NaN
            "interval": "1m",
            "input_series": [
                {"series": f"nv_cpu_utilization{{{sel}}}", "values": "0.1x5"},
                {
                    "series": f'vllm:time_to_first_token_seconds_bucket{{{sel},le="+Inf"}}',
                    "values": "0+0x5",
                },
            ],
            "promql_expr_test": [
                {"expr": query, "eval_time": "4m", "exp_samples": [{"value": 0}]}
                for query in [*vllm.values(), *trt.values()]
            ],
        },
    ]


def test_llm_alerts_and_scaling_queries_under_promtool(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(_rules(("vllm",)))
    tests = yaml.safe_load((HERE / "llm_alerts.test.yaml").read_text())
    tests["tests"] += _scaling_tests()
    (tmp_path / "llm.test.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    tested = promtool("test", "rules", "llm.test.yaml", cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_tritons_own_in_flight_and_pending_series_under_promtool(tmp_path: Path) -> None:
    """The triggers of an engine without metrics of its own, and the p99 latency rule leaving
    a streamed model out, evaluated by promtool on series named as Triton exports them."""
    triggers = {t.name: t.query for t in promql.in_flight_triggers(NAMESPACE, JOB)}
    sel = f'namespace="{NAMESPACE}",job="{JOB}"'
    rules = alert_rules(NAMESPACE, JOB, 500, 2.0, 2.0, streamed=("llm.v2",))
    (tmp_path / "rules.yaml").write_text(rules_yaml(rules))
    slow = 'quantile="0.99"} '
    tests = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    # 2 requests/s taking 3 s each: 6 in flight; 5 pending in Triton
                    {"series": f'nv_inference_request_duration_us{{{sel},model="llm.v2"}}',
                     "values": "0+360000000x10"},
                    {"series": f'nv_inference_pending_request_count{{{sel},model="llm.v2"}}',
                     "values": "5x10"},
                    # a 20 s generation is no latency breach; a 900 ms classifier p99 is
                    {"series": f'nv_inference_request_summary_us{{{sel},model="llm.v2",{slow}',
                     "values": "20000000x10"},
                    {"series": f'nv_inference_request_summary_us{{{sel},model="llmXv2",{slow}',
                     "values": "900000x10"},
                ],
                "promql_expr_test": [
                    {"expr": triggers["triton-in-flight"], "eval_time": "5m",
                     "exp_samples": [{"value": 6}]},
                    {"expr": triggers["triton-pending"], "eval_time": "5m",
                     "exp_samples": [{"value": 5}]},
                    {"expr": next(r for r in rules if r.name == "triton-latency-slo").query,
                     "eval_time": "5m", "exp_samples": [{"value": 900}]},
                ],
            }
        ],
    }  # fmt: skip
    (tmp_path / "t.test.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    tested = promtool("test", "rules", "t.test.yaml", cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
