"""The load generator: closed loop counts every request; open loop does not hide queueing."""

from __future__ import annotations

import time

from infra.perf import loadgen


def test_closed_loop_counts_requests_and_errors() -> None:
    calls = []

    def send() -> None:
        calls.append(1)
        if len(calls) % 4 == 0:
            raise TimeoutError("slow")

    result = loadgen.closed_loop(send, concurrency=2, duration_s=10, requests=20)
    assert result.ok == 15 and result.errors == {"TimeoutError": 5}
    assert result.summary()["p99_ms"] >= result.summary()["p50_ms"]


def test_open_loop_measures_from_the_scheduled_time() -> None:
    def slow() -> None:
        time.sleep(0.02)

    # 100 requests/s into one worker that serves 50/s: the backlog must show in the latency.
    result = loadgen.open_loop(slow, rate=100, duration_s=0.5, workers=1)
    assert result.ok == 50
    assert result.percentile(0.99) > 150
