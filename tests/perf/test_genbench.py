"""LLM bench metrics as AIPerf defines them, from canned generations (no server)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from infra.clients.base import InvokeFailed
from infra.clients.generate import Generation
from infra.perf.bench.genbench import (
    GenLoad,
    GenResult,
    arrival_offsets,
    percentiles,
    run_genbench,
    summarize,
    tpot_ms,
)
from infra.perf.bench.genrequest import open_loop_load, parse_goodput, read_prompts
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
    seen: list[str] = []

    def generate(prompt: str) -> Generation:
        seen.append(prompt)
        return _gen(1.0, 2.0, 2)

    record = run_genbench(
        generate,
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
    assert parse_goodput("time_to_first_token:100 inter_token_latency:3.4") == {
        "time_to_first_token": 100.0,
        "inter_token_latency": 3.4,
    }
    for bad in ("ttft:100", "time_to_first_token:nan", "time_to_first_token:-1", ""):
        with pytest.raises(UsageError, match="goodput"):
            parse_goodput(bad)


def test_poisson_schedule_is_seeded_and_exponential() -> None:
    load = GenLoad(("p",), requests=2000, rate=10.0, poisson=True, seed=7)
    offsets = arrival_offsets(load)
    assert offsets == arrival_offsets(load)  # deterministic: the same seed, the same schedule
    assert offsets != arrival_offsets(GenLoad(("p",), 2000, rate=10.0, poisson=True, seed=8))
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert offsets[0] == 0.0 and len(offsets) == 2000 and min(gaps) > 0
    assert sum(gaps) / len(gaps) == pytest.approx(0.1, rel=0.06)  # mean gap 1 / rate
    assert len(set(round(g, 9) for g in gaps)) > 1900  # not evenly spaced
    constant = arrival_offsets(GenLoad(("p",), requests=4, rate=2.0))
    assert constant == [0.0, 0.5, 1.0, 1.5]


def test_deadline_bounds_the_schedule_and_the_run() -> None:
    load = GenLoad(("p",), requests=50, rate=1000.0, poisson=True, seed=3, deadline_s=0.01)
    expected = [t for t in arrival_offsets(replace(load, deadline_s=None)) if t < 0.01]
    assert arrival_offsets(load) == expected and 0 < len(expected) < 50
    seen: list[str] = []
    lock = threading.Lock()

    def generate(prompt: str) -> Generation:
        with lock:
            seen.append(prompt)
        return _gen(1.0, 2.0, 2)

    record = run_genbench(generate, load)
    assert len(seen) == len(expected) == record["sent"] == record["ok"]
    assert record["unsent"] == 50 - len(expected)
    assert record["arrival"] == "poisson" and record["seed"] == 3
    assert record["deadline_s"] == 0.01


def test_arrival_and_duration_need_a_rate() -> None:
    closed = GenLoad(("p",), requests=3)
    assert open_loop_load(closed, False, None) == closed
    with pytest.raises(UsageError, match="--arrival poisson applies to an open loop"):
        open_loop_load(closed, True, None)
    with pytest.raises(UsageError, match="--duration applies to an open loop"):
        open_loop_load(closed, False, 2.0)
    with pytest.raises(UsageError, match="must be above 0"):
        open_loop_load(GenLoad(("p",), requests=3, rate=0.0), True, None)
    opened = open_loop_load(GenLoad(("p",), requests=3, rate=2.0), True, 9.0)
    assert opened.poisson and opened.deadline_s == 9.0 and opened.seed == 0


def test_aiperf_metrics_and_goodput() -> None:
    """AIPerf's record metrics with avg/min/max/std/p50/p90/p99, the throughputs, and goodput:
    requests per second meeting every SLO."""
    done = [_gen(100, 1100, 11), _gen(300, 2300, 11), _gen(50, 50, 1)]
    result = GenResult(done=done, sent=3, started=0.0, ended=2.0)
    slos = {"time_to_first_token": 200.0, "inter_token_latency": 150.0}
    metrics = summarize(result, GenLoad(("p",), 3), slos)["metrics"]
    ttft = metrics["time_to_first_token"]
    assert (ttft["avg"], ttft["min"], ttft["max"], ttft["p50"]) == (150.0, 50.0, 300.0, 100.0)
    assert ttft["std"] == pytest.approx(108.012, abs=1e-3)
    assert metrics["inter_token_latency"]["avg"] == 150.0  # (100 + 200) / 2; one-token left out
    assert metrics["output_token_throughput_per_user"]["max"] == 10.0  # 1000 / 100 ms
    assert metrics["output_sequence_length"]["min"] == 1.0
    assert metrics["output_token_throughput"] == 11.5 and metrics["request_throughput"] == 1.5
    # the first meets both SLOs; the second's TTFT is 300 ms; the third has no ITL: fails
    assert metrics["goodput"] == 0.5
    assert summarize(result, GenLoad(("p",), 3))["metrics"]["goodput"] is None


def test_a_bench_where_no_request_produced_a_token_fails() -> None:
    from cli.genbench import bench_generate
    from cli.output import Output
    from tdk.errors import TdkError

    class Silent:
        model = "llm-0"

        def generate(self, prompt: str, max_tokens: int, stream: bool) -> Generation:
            raise InvokeFailed("not a generate model", code="400")

    with pytest.raises(TdkError, match="no request to llm-0 produced a token"):
        bench_generate(Output(json_mode=True), Silent(), [GenLoad(("p",), 2)], 4)  # type: ignore[arg-type]


def test_input_sequence_length_of_the_prompts_sent() -> None:
    """AIPerf's input sequence length, over the successful requests' prompts, counted as the
    record says (words: no tokenizer); a failed request's prompt is left out."""

    def generate(prompt: str) -> Generation:
        if prompt == "fails here":
            raise InvokeFailed("boom", code="500")
        return _gen(10, 20, 2)

    prompts = ("one two three", "a b c d e", "fails here")
    record = run_genbench(generate, GenLoad(prompts, requests=3, concurrency=1))
    isl = record["metrics"]["input_sequence_length"]
    assert (isl["avg"], isl["min"], isl["max"], isl["p50"], isl["p99"]) == (4.0, 3, 5, 3, 5)
    assert isl["std"] == 1.0
    assert record["input_sequence_length_counted_as"].startswith("whitespace-separated words")
