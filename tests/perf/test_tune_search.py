"""The tune search on a known throughput/latency surface: grid coverage, the hill climb's reach
and economy, the Pareto front, and config edits made through the ModelConfig protobuf."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from infra.perf.tune.search import (
    Point,
    Search,
    Settings,
    full_search,
    pareto_front,
    quick_search,
)
from infra.perf.tune.space import Knobs, Space, apply_knobs, shipped_knobs
from packager.config import CONFIG_NAME, dump_config, load_config, parse_config

SPACE = Space(
    instances=(1, 2, 3, 4),
    max_batch_size=(4, 8, 16, 32),
    max_queue_delay_us=(0, 100, 500, 2000),
)
SETTINGS = Settings(budget_ms=50, concurrency=(1, 2, 4, 8, 16, 32), duration_s=0)


def surface(knobs: Knobs, concurrency: int) -> Point:
    """A unimodal model: more instances help up to 3, batching helps, long delays hurt p99.

    Capacity (rps) = 100 * min(instances, 3) * (2 if dynamic else 1) * (1 + mbs / 64)
    minus the delay penalty; latency grows linearly with concurrency over capacity.
    """
    capacity = 100 * min(knobs.instances, 3) * (2 if knobs.dynamic_batching else 1)
    capacity = capacity * (64 + knobs.max_batch_size) // 64
    capacity -= knobs.max_queue_delay_us // 40 + (10 if knobs.preferred else 0)
    throughput = min(concurrency * 100, capacity)
    p99 = 5 + concurrency * 1000 / capacity + knobs.max_queue_delay_us / 1000
    return Point(knobs, concurrency, float(throughput), p99 / 2, p99 * 0.8, p99, 0)


class Recorder:
    def __init__(self) -> None:
        self.loaded: list[Knobs] = []
        self.measured: list[tuple[Knobs, int]] = []
        self.progress: list[tuple[int, int]] = []

    def prepare(self, knobs: Knobs) -> None:
        self.loaded.append(knobs)

    def measure(self, knobs: Knobs, concurrency: int) -> Point:
        self.measured.append((knobs, concurrency))
        return surface(knobs, concurrency)

    def report(self, done: int, total: int, best: Point | None) -> None:
        self.progress.append((done, total))


def test_grid_is_every_distinct_config() -> None:
    grid = SPACE.grid()
    # without dynamic batching the delay and preferred sizes collapse: 4 * 4; with: 4*4*4*2
    assert len(grid) == 16 + 128 == len(set(grid))
    assert Knobs(2, 8, False) in grid and Knobs(2, 8, True, 500, (8,)) in grid


def test_full_search_measures_everything_and_finds_the_optimum() -> None:
    recorder, search = Recorder(), Search(SETTINGS)
    full_search(search, SPACE, recorder.prepare, recorder.measure, recorder.report)
    assert len(recorder.measured) == 144 * 6 and len(recorder.loaded) == 144
    assert recorder.progress[-1] == (144, 144)
    best = search.best()
    assert best is not None
    # 3 instances (4 adds nothing), dynamic, mbs 32, no delay, no preferred: 100*3*2*96/64 = 900
    assert best.knobs == Knobs(3, 32, True, 0, ())
    assert best.throughput_rps == 900.0 and best.p99_ms <= SETTINGS.budget_ms


def test_quick_search_reaches_full_with_a_third_of_the_measurements() -> None:
    full, quick = Search(SETTINGS), Search(SETTINGS)
    full_recorder, quick_recorder = Recorder(), Recorder()
    full_search(full, SPACE, full_recorder.prepare, full_recorder.measure, full_recorder.report)
    start = Knobs(1, 16, True, 100, ())  # the sample model's shipped knobs
    quick_search(
        quick, SPACE, start, quick_recorder.prepare, quick_recorder.measure, quick_recorder.report
    )
    full_best, quick_best = full.best(), quick.best()
    assert full_best is not None and quick_best is not None
    assert quick_best.throughput_rps >= 0.9 * full_best.throughput_rps
    assert len(quick_recorder.measured) * 3 <= len(full_recorder.measured)


def test_pareto_front_is_exact() -> None:
    k = Knobs(1, 8, False)
    points = [
        Point(k, 1, 100, 1, 1, 10, 0),
        Point(k, 2, 150, 1, 1, 20, 0),
        Point(k, 3, 140, 1, 1, 15, 0),  # on the front: faster than 150's p99, more than 100
        Point(k, 4, 120, 1, 1, 30, 0),  # dominated by 150 @ 20
        Point(k, 5, 500, 1, 1, 5, 3),  # errors: never on the front
    ]
    front = pareto_front(points)
    assert [(p.throughput_rps, p.p99_ms) for p in front] == [(100, 10), (140, 15), (150, 20)]


def test_apply_knobs_edits_only_the_tuned_fields(sample_repo: Path) -> None:
    config = load_config(sample_repo / "image_classifier" / CONFIG_NAME)
    assert shipped_knobs(config) == Knobs(1, 16, True, 100, ())
    tuned = apply_knobs(config, Knobs(2, 32, True, 500, (32,)))
    text = dump_config(tuned)
    again = parse_config(text)
    assert again.max_batch_size == 32
    assert list(again.dynamic_batching.preferred_batch_size) == [32]
    assert again.dynamic_batching.max_queue_delay_microseconds == 500
    assert [g.count for g in again.instance_group] == [2]
    assert again.input == config.input and again.output == config.output
    assert again.backend == "onnxruntime"
    off = apply_knobs(config, Knobs(1, 8, False))
    assert not off.HasField("dynamic_batching")
    assert shipped_knobs(off) == Knobs(1, 8, False)


def test_a_queue_delay_the_search_did_not_decide_is_written_back_unchanged(
    sample_repo: Path,
) -> None:
    """image_classifier ships a 100 us delay, not among the delays tried: the climb starts at the
    shipped config itself, and moving only the instances keeps the delay in the written text."""
    from infra.perf.tune.accel import Capabilities
    from infra.perf.tune.tuneio import tuned_text
    from infra.perf.tune.tuner import model_space

    model_dir = sample_repo / "image_classifier"
    config = load_config(model_dir / CONFIG_NAME)
    shipped = shipped_knobs(config)
    space, _ = model_space(
        Space(instances=(1, 2), max_batch_size=(16,), max_queue_delay_us=(0, 2000)),
        config,
        Capabilities(gpu=False),
    )
    assert space.max_queue_delay_us == (0, 100, 2000)

    def measure(knobs: Knobs, concurrency: int) -> Point:  # only instances matter
        return Point(knobs, concurrency, 100.0 * knobs.instances, 1, 1, 1, 0)

    search = Search(Settings(budget_ms=50, concurrency=(1,)))
    quick_search(search, space, shipped, lambda k: None, measure, lambda *a: None)
    best = search.best()
    assert best is not None and best.knobs.instances == 2
    _, after = tuned_text(model_dir, apply_knobs(config, best.knobs))
    assert "max_queue_delay_microseconds: 100" in after
    given = replace(space, max_queue_delay_us=(0,), shipped_delay=False)  # --queue-delays-us 0
    assert given.with_shipped(shipped).max_queue_delay_us == (0,)
