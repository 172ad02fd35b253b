"""The server's drift between points: the shipped config's best point is measured again, and
how much it varied is the least gain any decision must beat (windows of one point agree more
closely than points measured apart, docs/performance.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.perf.tune.search import (
    Point,
    Search,
    Settings,
    probe_drift,
    quick_search,
    sweep,
    typical,
)
from infra.perf.tune.space import Knobs, Space
from infra.perf.tune.tuner import SearchMode, TuneReport, _search

SHIPPED, CANDIDATE = Knobs(1, 8, False), Knobs(2, 8, False)


def _point(knobs: Knobs, concurrency: int, rps: float, spread: float = 0.01) -> Point:
    return Point(knobs, concurrency, rps, 1.0, 1.5, 2.0, 0, 3, spread, True)


def _scripted(rates: list[float]) -> tuple[list[tuple[Knobs, int]], object]:
    calls: list[tuple[Knobs, int]] = []
    values: Iterator[float] = iter(rates)

    def measure(knobs: Knobs, concurrency: int) -> Point:
        calls.append((knobs, concurrency))
        return _point(knobs, concurrency, next(values))

    return calls, measure


def test_the_best_point_is_measured_again_and_every_point_carries_the_drift() -> None:
    calls, measure = _scripted([50, 100, 90, 110, 100])  # c=1, c=4, then three repeats
    search = Search(Settings(budget_ms=50, concurrency=(1, 4), repeats=3))
    sweep(search, SHIPPED, lambda k: None, measure, early_stop=False)  # type: ignore[arg-type]
    repeats = probe_drift(search, measure)  # type: ignore[arg-type]
    assert calls[2:] == [(SHIPPED, 4)] * 3  # the best point's concurrency, config still loaded
    assert [p.throughput_rps for p in repeats] == [90, 110, 100]
    assert search.drift == pytest.approx(110 / 90 - 1)
    assert all(p.drift == search.drift for p in [*search.points, *repeats])
    assert search.points[1].noise == pytest.approx(0.2222, abs=1e-4)  # not its 1% spread
    assert search.points[1].to_dict()["noise"] == 0.2222


def test_no_repeats_and_a_failed_repeat_leave_no_drift() -> None:
    calls, measure = _scripted([100])
    search = Search(Settings(budget_ms=50, concurrency=(4,), repeats=0))
    sweep(search, SHIPPED, lambda k: None, measure, early_stop=False)  # type: ignore[arg-type]
    assert probe_drift(search, measure) == [] and search.drift == 0.0  # type: ignore[arg-type]
    assert len(calls) == 1
    _, failing = _scripted([100, 0])
    search = Search(Settings(budget_ms=50, concurrency=(4,), repeats=1))
    sweep(search, SHIPPED, lambda k: None, failing, early_stop=False)  # type: ignore[arg-type]
    probe_drift(search, failing)  # type: ignore[arg-type]
    assert search.drift == 0.0  # a repeat that served nothing says nothing about drift


@pytest.mark.parametrize(("drift", "climbs"), [(0.0, True), (0.15, False)])
def test_the_climb_needs_a_gain_beyond_the_drift(drift: float, climbs: bool) -> None:
    space = Space(instances=(1, 2, 4), max_batch_size=(8,), dynamic_batching=(False,))
    rates = {1: 100.0, 2: 108.0, 4: 150.0}  # 2 instances: +8% with tight windows

    def measure(knobs: Knobs, concurrency: int) -> Point:
        return _point(knobs, concurrency, rates[knobs.instances])

    search = Search(Settings(budget_ms=50, concurrency=(4,), pairs=0))  # no duel (test_duel)
    search.drift = drift
    quick_search(search, space, SHIPPED, lambda k: None, measure, lambda *a: None)
    assert search.configs_done == (3 if climbs else 2)  # 4 instances: reached only from 2
    said = [n for n in search.notes if "inside the spread" in n]
    assert said == ([] if climbs else [said[0]])
    assert climbs or "(15% / 15%)" in said[0]


def test_tune_reports_the_drift_and_keeps_the_shipped_config_inside_it() -> None:
    # the shipped sweep, 3 repeats, the climb's own sweep of it, and once more after the search
    rates = {SHIPPED: iter([100, 80, 120, 100, 100, 60]), CANDIDATE: iter([112])}
    loaded: list[Knobs] = []

    def measure(knobs: Knobs, concurrency: int) -> Point:
        return _point(knobs, concurrency, next(rates[knobs]))

    settings = Settings(budget_ms=50, concurrency=(4,), repeats=3, pairs=0)  # no duel
    space = Space(instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,))
    report = TuneReport("m", SearchMode.quick, settings, SHIPPED, Search(settings))
    _search(report, space, loaded.append, measure, lambda *a: None)
    data = report.to_dict()
    assert loaded == [SHIPPED, SHIPPED, CANDIDATE, SHIPPED]  # reloaded for the last measurement
    assert data["drift"] == pytest.approx(1.0) and data["repeats_rps"] == [80, 120, 100, 60]
    assert data["choice"]["config"] == SHIPPED.to_dict() and not report.improves  # +12% < 100%
    assert data["inside_noise"] is True
    assert any("varied by 100%" in n for n in report.notes)
    assert all(p["drift"] == 1.0 for p in data["points"])  # the climb's points carry it too


def test_the_measurement_after_the_search_widens_the_drift() -> None:
    rates = {SHIPPED: iter([100, 100, 100, 100, 100, 150]), CANDIDATE: iter([120])}

    def measure(knobs: Knobs, concurrency: int) -> Point:
        return _point(knobs, concurrency, next(rates[knobs]))

    settings = Settings(budget_ms=50, concurrency=(4,), repeats=3, pairs=0)  # no duel
    space = Space(instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,))
    report = TuneReport("m", SearchMode.quick, settings, SHIPPED, Search(settings))
    _search(report, space, lambda k: None, measure, lambda *a: None)
    # the climb moved on a 20% gain with no drift seen yet; the last measurement (+50%) shows
    # that gain was inside the server's drift, so the shipped config stays
    assert report.drift == pytest.approx(0.5) and not report.improves and report.inside_noise


@pytest.mark.parametrize("option", ["--repeats", "--pairs"])
def test_repeats_out_of_bounds_are_refused(option: str) -> None:
    runner = CliRunner()
    for value in ("-1", "21"):
        result = runner.invoke(app, ["tune", ".", "--latency-budget-ms", "5", option, value])
        assert result.exit_code == 2 and f"{option} {value}" in result.output, result.output


def test_the_shipped_best_is_the_median_of_its_measurements() -> None:
    # the sweep's best point was a lucky 130; measured again it serves about 100
    rates = {SHIPPED: iter([130, 100, 95, 105, 130, 98]), CANDIDATE: iter([90])}

    def measure(knobs: Knobs, concurrency: int) -> Point:
        return _point(knobs, concurrency, next(rates[knobs]))

    settings = Settings(budget_ms=50, concurrency=(4,), repeats=3)
    space = Space(instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,))
    report = TuneReport("m", SearchMode.quick, settings, SHIPPED, Search(settings))
    _search(report, space, lambda k: None, measure, lambda *a: None)
    assert report.shipped_best is not None
    assert report.shipped_best.throughput_rps == 100  # of 130, 100, 95, 105 and 98 (after)
    assert report.drift == pytest.approx(130 / 95 - 1) and report.shipped_best.drift == report.drift
    assert report.to_dict()["shipped_best"]["throughput_rps"] == 100


def test_a_measurement_over_the_budget_is_not_the_median() -> None:
    search = Search(Settings(budget_ms=50, concurrency=(4,)))
    search.points = [_point(SHIPPED, 4, 100)]
    over = Point(SHIPPED, 4, 500, 1.0, 1.5, 80.0, 0, 3, 0.01, True)  # p99 80 ms > 50
    search.again = [over, over, _point(SHIPPED, 4, 90)]
    median = typical(search)
    assert median is not None and median.throughput_rps == 100  # of 100 and 90 (upper middle)
