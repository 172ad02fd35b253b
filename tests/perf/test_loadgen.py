"""The load generator: closed loop counts every request; open loop does not hide queueing."""

from __future__ import annotations

import time

from infra.perf.bench import loadgen


def test_closed_loop_counts_requests_and_errors() -> None:
    calls = []

    def send() -> None:
        calls.append(1)
        if len(calls) % 4 == 0:
            raise TimeoutError("slow")

    result = loadgen.closed_loop(send, concurrency=2, duration_s=10, requests=20)
    assert result.ok == 15 and result.errors == {"TimeoutError": 5}
    assert len(result.latencies_ms) == 15


def test_percentiles_of_known_latencies_are_exact() -> None:
    # 1..100 ms in shuffled order: the q-th percentile is the value at index int(q * n).
    result = loadgen.Result("concurrency", 1, duration_s=2.0, ok=100)
    result.latencies_ms = [float((i * 37) % 100 + 1) for i in range(100)]
    summary = result.summary()
    assert (summary["p50_ms"], summary["p90_ms"], summary["p99_ms"]) == (51.0, 91.0, 100.0)
    assert summary["mean_ms"] == 50.5
    assert summary["throughput_rps"] == 50.0
    single = loadgen.Result("rate", 10, duration_s=1.0, ok=1, latencies_ms=[7.5])
    assert single.percentile(0.5) == single.percentile(0.99) == 7.5


def test_open_loop_measures_from_the_scheduled_time() -> None:
    def slow() -> None:
        time.sleep(0.02)

    # 100 requests/s into one worker that serves 50/s: the backlog must show in the latency.
    result = loadgen.open_loop(slow, rate=100, duration_s=0.5, workers=1)
    assert result.ok == 50
    assert result.percentile(0.99) > 150
