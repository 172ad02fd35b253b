"""LLM bench metrics as AIPerf defines them, from canned generations (no server)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cli.genbench import one_level, read_prompts
from infra.clients.base import InvokeFailed
from infra.clients.generate import Generation
from infra.perf.genbench import (
    GenLoad,
    GenResult,
    percentiles,
    run_genbench,
    summarize,
    tpot_ms,
)
from tdk.errors import UsageError


def _gen(ttft: float, total: float, tokens: int) -> Generation:
    return Generation("x" * tokens, tokens, tokens, ttft, total)


def test_tpot_is_aiperf_inter_token_latency() -> None:
    assert tpot_ms(_gen(100.0, 400.0, 4)) == pytest.approx(100.0)  # (400 - 100) / (4 - 1)
    assert tpot_ms(_gen(100.0, 100.0, 1)) is None  # undefined below two tokens


def test_percentiles_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentiles(values) == {"p50": 50.0, "p90": 90.0, "p99": 99.0}
    assert percentiles([7.0]) == {"p50": 7.0, "p90": 7.0, "p99": 7.0}
    assert percentiles([]) == {"p50": None, "p90": None, "p99": None}


def test_summary_fields_and_error_counting() -> None:
    calls: list[str] = []
    lock = threading.Lock()

    def generate(prompt: str) -> Generation:
        with lock:
            calls.append(prompt)
            index = len(calls)
        if index % 5 == 0:
            raise InvokeFailed("stream broke", code="StreamError")
        return _gen(10.0, 10.0 + 5.0 * 3, 4)

    record = run_genbench(generate, GenLoad(("a", "b"), requests=10, concurrency=3))
    assert sorted(calls) == ["a"] * 5 + ["b"] * 5
    assert record["ok"] == 8 and record["errors"] == 2
    assert record["error_kinds"] == {"StreamError": 2}
    assert record["ttft_ms"]["p50"] == 10.0 and record["tpot_ms"]["p99"] == 5.0
    assert record["e2e_ms"] == {"p50": 25.0, "p90": 25.0, "p99": 25.0}
    assert record["output_tokens"] == 32
    assert record["requests_per_s"] > 0 and record["mode"] == "concurrency"


def test_throughputs_over_the_benchmark_duration() -> None:
    result = GenResult(done=[_gen(10.0, 40.0, 4), _gen(10.0, 70.0, 7)], started=5.0, ended=7.0)
    record = summarize(result, GenLoad(("p",), requests=2))
    assert record["output_tokens_per_s"] == 5.5  # 11 tokens over 2 s
    assert record["requests_per_s"] == 1.0
    assert record["tpot_ms"] == {"p50": 10.0, "p90": 10.0, "p99": 10.0}


def test_open_loop_sends_every_request() -> None:
    seen = []
    record = run_genbench(
        lambda p: seen.append(p) or _gen(1.0, 2.0, 2),
        GenLoad(("p",), requests=5, rate=1000.0),
    )
    assert len(seen) == 5 and record["ok"] == 5 and record["mode"] == "rate"


def test_prompt_options(tmp_path: Path) -> None:
    file = tmp_path / "prompts.txt"
    file.write_text("first\n\n  \nsecond\n")
    assert read_prompts(None, file) == ("first", "second")
    assert read_prompts("hi", None) == ("hi",)
    with pytest.raises(UsageError, match="exclude"):
        read_prompts("hi", file)
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(UsageError, match="no prompt"):
        read_prompts(None, tmp_path / "empty.txt")
    with pytest.raises(UsageError, match="cannot read"):
        read_prompts(None, tmp_path / "missing.txt")
    with pytest.raises(UsageError, match="one level"):
        one_level((1, 2))
