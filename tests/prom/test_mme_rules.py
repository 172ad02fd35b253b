"""``k8sModelMode: mme``: the fronts' alert rules (thrash, cold-load p99, failed loads) and
KEDA's pending + evictions queries, checked and unit-tested with ``promtool`` on series named
as the front exports them (``infra/targets/local/metrics.py``: ``tdk_*``, times in µs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from infra.k8s import promql
from infra.k8s.alerts import multi_model_rules, rules_yaml
from tests.prom.tools import promtool

NAMESPACE, JOB = "triton", "tdk-mme"
SEL = f'namespace="{NAMESPACE}",job="{JOB}"'
COLD_LOAD_S = 60
NAMES = ["front-eviction-thrash", "front-cold-load-p99", "front-load-failures"]


def _series(name: str, values: str, pod: str = "a", **labels: str) -> dict[str, str]:
    extra = "".join(f',{k}="{v}"' for k, v in labels.items())
    return {"series": f'{name}{{{SEL},pod="{pod}"{extra}}}', "values": values}


def _quiet(eval_time: str) -> list[dict[str, Any]]:
    return [{"eval_time": eval_time, "alertname": name, "exp_alerts": []} for name in NAMES]


def _firing(name: str, eval_time: str, severity: str = "warning") -> dict[str, Any]:
    summary = next(r.documentation for r in _rules() if r.name == name)
    alert = {"exp_labels": {"severity": severity}, "exp_annotations": {"summary": summary}}
    return {"eval_time": eval_time, "alertname": name, "exp_alerts": [alert]}


def _rules() -> list[Any]:
    return multi_model_rules(NAMESPACE, JOB, COLD_LOAD_S)


WAIT = "tdk_model_loading_wait_time_microseconds"
IDLE = [
    _series("tdk_loaded_model_count", "0x40"),
    _series("tdk_model_evictions_total", "0x40"),
    _series("tdk_model_load_failures_total", "0x40"),
    _series(WAIT, "0x40", quantile="0.99"),
    _series(f"{WAIT}_count", "0x40"),
]


def _alert_tests() -> list[dict[str, Any]]:
    two_pods = [_series("tdk_loaded_model_count", "20x40", pod=p) for p in ("a", "b")]
    return [
        # idle: every series exists, nothing happens: nothing fires
        {"interval": "1m", "input_series": IDLE, "alert_rule_test": _quiet("30m")},
        # thrash: two pods, each evicting 1 model/s (60 a minute) -> fires after 10 minutes;
        # at 0.1/s per pod (KEDA's own target) it does not: the bare ratio is compared
        {
            "interval": "1m",
            "input_series": [
                *two_pods,
                _series("tdk_model_evictions_total", "0+60x40", pod="a"),
                _series("tdk_model_evictions_total", "0+60x40", pod="b"),
            ],
            "alert_rule_test": [
                {"eval_time": "8m", "alertname": NAMES[0], "exp_alerts": []},
                _firing(NAMES[0], "20m"),
            ],
        },
        {
            "interval": "1m",
            "input_series": [
                *two_pods,
                _series("tdk_model_evictions_total", "0+6x40", pod="a"),
                _series("tdk_model_evictions_total", "0+6x40", pod="b"),
            ],
            "alert_rule_test": _quiet("30m"),
        },
        # cold loads: p99 wait 90 s while loads happen -> fires after 5 minutes; once loads
        # stop (count flat from minute 20) the stale quantile no longer fires it
        {
            "interval": "1m",
            "input_series": [
                _series(WAIT, "90000000x40", quantile="0.99"),
                _series(f"{WAIT}_count", "0+3x20 60x20"),
            ],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": NAMES[1], "exp_alerts": []},
                _firing(NAMES[1], "12m"),
                {"eval_time": "35m", "alertname": NAMES[1], "exp_alerts": []},
            ],
        },
        # a cold p99 of 30 s is under the 60 s threshold
        {
            "interval": "1m",
            "input_series": [
                _series(WAIT, "30000000x40", quantile="0.99"),
                _series(f"{WAIT}_count", "0+3x40"),
            ],
            "alert_rule_test": _quiet("20m"),
        },
        # one failed load at minute 10: fires a minute later, gone 10 minutes after
        {
            "interval": "1m",
            "input_series": [_series("tdk_model_load_failures_total", "0x10 1x30")],
            "alert_rule_test": [
                {"eval_time": "9m", "alertname": NAMES[2], "exp_alerts": []},
                _firing(NAMES[2], "13m", severity="critical"),
                {"eval_time": "30m", "alertname": NAMES[2], "exp_alerts": []},
            ],
        },
    ]


def _query_tests() -> list[dict[str, Any]]:
    """KEDA's triggers and the dashboards' figures evaluated on the fronts' series."""
    triggers = {t.name: t.query for t in promql.multi_model_triggers(NAMESPACE, JOB)}
    figures = promql.multi_model_figures(NAMESPACE, JOB)
    busy = [
        _series("tdk_pending_requests", "5x10", pod="a"),
        _series("tdk_pending_requests", "7x10", pod="b"),
        # 12 evictions a minute on a, 18 on b: 0.5/s in all
        _series("tdk_model_evictions_total", "0+12x10", pod="a"),
        _series("tdk_model_evictions_total", "0+18x10", pod="b"),
        # 60 requests a minute, 45 of them hits
        _series("tdk_model_cache_hit_count", "0+60x10"),
        _series("tdk_model_cache_hit_sum", "0+45x10"),
        _series("tdk_loaded_model_count", "19x10", pod="a"),
        _series("tdk_loaded_model_count", "20x10", pod="b"),
        _series(WAIT, "2500000x10", pod="a", quantile="0.99"),
        _series(WAIT, "4000000x10", pod="b", quantile="0.99"),
    ]
    return [
        {
            "interval": "1m",
            "input_series": busy,
            "promql_expr_test": [
                {"expr": triggers["front-pending"], "eval_time": "5m", **_exp(12)},
                {"expr": triggers["model-evictions"], "eval_time": "5m", **_exp(0.5)},
                {"expr": figures["ModelCacheHit"], "eval_time": "5m", **_exp(0.75)},
                {"expr": figures["LoadedModelCount"], "eval_time": "5m", **_exp(39)},
                {"expr": figures["ModelLoadingWaitTime p99 (ms)"], "eval_time": "5m", **_exp(4000)},
            ],
        },
        # idle: KEDA reads 0 (``or vector(0)``), not "no data"
        {
            "interval": "1m",
            "input_series": IDLE,
            "promql_expr_test": [
                {"expr": triggers["front-pending"], "eval_time": "5m", **_exp(0)},
                {"expr": triggers["model-evictions"], "eval_time": "5m", **_exp(0)},
            ],
        },
    ]


def _exp(value: float) -> dict[str, Any]:
    return {"exp_samples": [{"labels": "{}", "value": value}]}


def _write(tmp_path: Path) -> Path:
    (tmp_path / "rules.yaml").write_text(rules_yaml(_rules()))
    tests = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": _alert_tests() + _query_tests(),
    }
    path = tmp_path / "mme_alerts.test.yaml"
    path.write_text(yaml.safe_dump(tests, sort_keys=False, width=1000))
    return path


def test_multi_model_rules_pass_promtool_check(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(rules_yaml(_rules()))
    checked = promtool("check", "rules", tmp_path / "rules.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert [r.name for r in _rules()] == NAMES


def test_multi_model_rules_and_keda_queries_pass_promtool_unit_tests(tmp_path: Path) -> None:
    tests = _write(tmp_path)
    result = promtool("test", "rules", tests.name, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_broken_threshold_fails_the_unit_tests(tmp_path: Path) -> None:
    """The unit tests can fail: a thrash rule that compares ``... or vector(0) > t`` (the
    precedence trap) fires on the low-eviction series."""
    tests = _write(tmp_path)
    rules = yaml.safe_load((tmp_path / "rules.yaml").read_text())
    thrash = rules["groups"][0]["rules"][0]
    thrash["expr"] = f"({thrash['expr'].split(' > ')[0]}) or vector(0) > 0.5"
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules, width=1000))
    result = promtool("test", "rules", tests.name, cwd=tmp_path)
    assert result.returncode != 0
