"""Stable points (perf_analyzer's method: windows until the last three agree), noise-aware
decisions, and a load generator that says when it, not the server, was the limit."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from infra.perf.bench.drive import InProcess, Processes, shares
from infra.perf.bench.loadgen import Result, Stability, Window, measure_stable
from infra.perf.tune.search import Point, Search, Settings, quick_search
from infra.perf.tune.space import Knobs, Space
from infra.perf.tune.tuner import SearchMode, TuneReport
from tests.local.local_helpers import alive, children
from tests.stand_ins import triton_stand_in


def _window(rps: float, latency_ms: float = 1.0) -> Window:
    count = int(rps)
    return Window(Result("concurrency", 1, 1.0, count, latencies_ms=[latency_ms] * count), 0.1)


def _script(values: list[float]) -> Iterator[Window]:
    return iter(_window(v) for v in values)


def test_windows_continue_until_the_last_three_agree() -> None:
    windows = _script([100, 300, 100, 102, 101, 500])
    point = measure_stable(lambda: next(windows), Stability(10, 10))
    assert point.windows == 5 and point.stable
    assert point.spread == pytest.approx(0.02)
    assert point.result.ok == 303 and point.result.duration_s == 3.0  # the last three merged
    assert point.fields()["spread"] == 0.02 and point.fields()["stable"] is True


def test_latency_counts_as_well_as_throughput() -> None:
    windows = iter([_window(100, 1.0), _window(100, 2.0), _window(100, 1.0), _window(100, 1.05)])
    point = measure_stable(lambda: next(windows), Stability(10, 4))
    assert point.windows == 4 and not point.stable and point.spread == pytest.approx(1.0)


def test_a_noisy_point_stops_at_max_windows_and_says_unstable() -> None:
    windows = _script([100, 200] * 10)
    point = measure_stable(lambda: next(windows), Stability(10, 6))
    assert point.windows == 6 and not point.stable and point.spread == pytest.approx(1.0)
    single = measure_stable(lambda: _window(100), Stability(10, 1))
    assert single.windows == 1 and not single.stable and math.isinf(single.spread)
    assert single.fields()["spread"] is None  # JSON has no infinity


def test_a_level_where_every_request_fails_is_never_stable() -> None:
    """Issue 49 item 2: 0 rps in three windows agreed, and bench said 'stable, spread 0 %'."""
    from collections import Counter

    failed = Result("concurrency", 1, 1.0, 0, errors=Counter({"500": 7}))
    calls: list[int] = []

    def window() -> Window:
        calls.append(1)
        return Window(failed, 0.1)

    point = measure_stable(window, Stability(10, 10))
    assert not point.stable and point.windows == 1 and len(calls) == 1
    assert point.fields()["spread"] is None and point.result.ok == 0
    idle = iter([Window(Result("concurrency", 1, 1.0, 0), 0.1)] * 4)
    assert not measure_stable(lambda: next(idle), Stability(10, 4)).stable


def _point(knobs: Knobs, rps: float, spread: float) -> Point:
    return Point(knobs, 4, rps, 1.0, 1.5, 2.0, 0, 3, spread, spread <= 0.1)


SHIPPED = Knobs(1, 8, False)
CANDIDATE = Knobs(2, 8, True)


def _report(shipped: Point, found: Point) -> TuneReport:
    settings = Settings(budget_ms=50)
    search = Search(settings, points=[found])
    return TuneReport("m", SearchMode.quick, settings, SHIPPED, search, shipped_best=shipped)


def test_a_gain_inside_the_spread_keeps_the_shipped_config_and_says_so() -> None:
    noisy = _report(_point(SHIPPED, 100, 0.15), _point(CANDIDATE, 110, 0.05))
    assert noisy.choice is not None and noisy.choice.knobs == SHIPPED and not noisy.improves
    assert noisy.inside_noise and any("inside the measured spread" in n for n in noisy.notes)
    assert noisy.to_dict()["inside_noise"] is True
    clear = _report(_point(SHIPPED, 100, 0.03), _point(CANDIDATE, 110, 0.05))
    assert clear.choice is not None and clear.choice.knobs == CANDIDATE and not clear.inside_noise


def test_quick_search_does_not_climb_on_noise() -> None:
    space = Space(instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,))

    def measure(knobs: Knobs, concurrency: int) -> Point:  # 2 instances: +8% but 20% spread
        return _point(knobs, 108 if knobs.instances == 2 else 100, 0.2)

    search = Search(Settings(budget_ms=50, concurrency=(4,), pairs=0))  # no duel (test_duel)
    quick_search(search, space, SHIPPED, lambda k: None, measure, lambda *a: None)
    assert search.configs_done == 2
    assert any("inside the spread" in note for note in search.notes)


def test_quick_search_stops_adding_instances_on_a_saturated_gpu() -> None:
    space = Space(instances=(1, 2, 4), max_batch_size=(8,), dynamic_batching=(False,))
    measured: list[Knobs] = []

    def measure(knobs: Knobs, concurrency: int) -> Point:
        measured.append(knobs)
        point = _point(knobs, 100.0 * knobs.instances, 0.01)
        return replace(point, gpu_utilization=0.99, gpu_memory_used_bytes=2e9)

    search = Search(Settings(budget_ms=50, concurrency=(4,)))
    quick_search(search, space, SHIPPED, lambda k: None, measure, lambda *a: None)
    assert {k.instances for k in measured} == {1}
    assert any("GPU was 99% busy" in note for note in search.notes)


def test_more_instances_slower_on_a_gpu_is_explained() -> None:
    settings = Settings(budget_ms=50)
    one, two = Knobs(1, 8, False), Knobs(2, 8, False)
    search = Search(settings, points=[_point(two, 110, 0.02)])
    report = TuneReport(
        "m", SearchMode.quick, settings, one, search, shipped_best=_point(one, 600, 0.02),
        shipped_points=[_point(one, 600, 0.02)], gpu=True,
    )  # fmt: skip
    [note] = [n for n in report.notes if "time-slice" in n]
    assert "2 instances served 110.0 rps against 600.0 for 1" in note
    report.gpu = False
    assert not [n for n in report.notes if "time-slice" in n]


def _busy(ms: float) -> None:
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


def test_a_client_doing_heavy_work_reports_itself_bound() -> None:
    def send() -> None:  # the client's own work per request: one CPU-bound millisecond
        _busy(1.0)

    point = measure_stable(lambda: InProcess(send).window(2, 0.3), Stability(50, 3))
    assert point.client_bound, point.client_cpu


def test_a_client_waiting_on_its_server_is_not_bound() -> None:
    def send() -> None:  # a server that takes 50 ms; the client only waits. Long beside the
        time.sleep(0.05)  # run-queue wait a busy machine adds to each wake-up, which counts

    point = measure_stable(lambda: InProcess(send).window(2, 0.3), Stability(50, 3))
    assert not point.client_bound and point.client_cpu < 0.5, point.client_cpu


def test_concurrency_is_spread_over_the_processes() -> None:
    assert shares(5, 2) == [3, 2] and shares(1, 3) == [1, 0, 0] and sum(shares(7, 4)) == 7


class SleepSender:
    """A picklable sender factory: each generator process builds one."""

    def __call__(self) -> Callable[[], object]:
        return lambda: time.sleep(0.002)


def test_generator_processes_each_send_and_report_their_cpu() -> None:
    driver = Processes(SleepSender(), 2)
    try:
        window = driver.window(4, 0.3)
    finally:
        driver.close()
    assert window.result.ok > 50 and not window.result.errors
    # client_cpu is the busiest process's CPU demand (running + waiting to run) per second of
    # its window: its two client threads can demand at most two seconds a second, whatever the
    # machine's load (waiting to run grows with load, so a fixed 0.5 failed at load 12); twice
    # that would mean the window's CPU is counted twice
    assert 0 < window.client_cpu <= 2 * 1.1


def test_closing_the_generator_leaves_no_process_of_ours() -> None:
    """The workers and the resource tracker that ``spawn`` starts are all reaped by close()
    (a tune stopped by SIGTERM must leave no process behind)."""
    before = children(os.getpid())
    driver = Processes(SleepSender(), 2)
    try:
        assert len(children(os.getpid()) - before) >= 2
    finally:
        driver.close()
    assert not [pid for pid in children(os.getpid()) - before if alive(pid)]


METRICS = """# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-a"} 0.25
nv_gpu_utilization{gpu_uuid="GPU-b"} 0.75
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a"} 1000
nv_gpu_memory_used_bytes{gpu_uuid="GPU-b"} 3000
nv_inference_count{model="m",version="1"} 12
"""


@pytest.fixture
def metrics_url() -> Iterator[str]:
    """A Prometheus text endpoint like Triton's on a GPU machine."""
    with triton_stand_in(ready=True, index=[], metrics=METRICS) as url:
        yield f"{url}/metrics"


def test_each_window_records_the_gpu_utilization_and_memory(metrics_url: str) -> None:
    from infra.perf.tune.gpu import MetricsReader, gpu_figures
    from infra.perf.tune.search import measure_with

    reader = MetricsReader(metrics_url)
    assert reader.has_gpu() and reader() == {
        "gpu_utilization": 0.75,  # the busiest GPU
        "gpu_memory_used_bytes": 4000.0,  # all GPUs
    }
    assert gpu_figures("nv_inference_count 3\n") == {}  # a CPU-only Triton
    settings = Settings(budget_ms=50, duration_s=0.05, stability=Stability(50, 3))
    measure = measure_with(lambda knobs: lambda: time.sleep(0.001), settings, reader)
    point = measure(SHIPPED, 1)
    assert point.windows == 3
    assert point.gpu_utilization == 0.75 and point.gpu_memory_used_bytes == 4000.0
    assert point.to_dict()["gpu_utilization"] == 0.75


class HeavyClient:
    """A target whose client side costs a CPU-bound millisecond per request (a starved client)."""

    def send(self, model: object, request: object) -> bytes:
        _busy(1.0)
        return b"ok"

    def decode(self, model: object, body: bytes) -> dict[str, object]:
        return {"out": body}

    def close(self) -> None:
        pass


class WaitingClient(HeavyClient):
    """A target whose server takes 5 ms; the client only waits (picklable for processes)."""

    def send(self, model: object, request: object) -> bytes:
        time.sleep(0.005)
        return b"ok"


def _bench(sample_repo: Path, client: type, processes: int) -> dict[str, Any]:
    from infra.clients.base import PreparedRequest
    from infra.perf.bench.measure import Load, RunsOn, run_bench
    from infra.perf.tune.tuner import model_of
    from packager.config import CONFIG_NAME, load_config

    model = model_of(load_config(sample_repo / "image_classifier" / CONFIG_NAME))
    load = Load((2,), duration_s=0.3, stability=Stability(50, 3), processes=processes)
    return run_bench(client, model, PreparedRequest(b"{}", None), load, RunsOn("local"))


def test_bench_says_client_bound_when_the_client_is_starved(
    sample_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.bench import _table
    from cli.output import Output

    starved = _bench(sample_repo, HeavyClient, 1)
    [level] = starved["levels"]
    assert starved["client_bound"] is True and level["client_bound"] is True
    assert level["windows"] == 3 and level["spread"] is not None and "stable" in level
    _table(Output(json_mode=False), starved)
    shown = capsys.readouterr()
    assert "bound" in shown.out and "load generator was the limit" in shown.out + shown.err
    waiting = _bench(sample_repo, WaitingClient, 2)  # two generator processes
    [level] = waiting["levels"]
    assert waiting["client_bound"] is False and level["ok"] > 0 and waiting["processes"] == 2
