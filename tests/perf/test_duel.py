"""Gains inside the noise are settled by a duel: both configs measured back to back in pairs,
the first of each pair alternating, and the candidate must win every pair (and the median by
the margin). Points measured seconds apart share the server's drift; points a minute apart do
not (docs/performance.md)."""

from __future__ import annotations

import contextlib
import itertools
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace

import pytest

from infra.perf.tune.search import CLIMB_GAIN, Point, Search, Settings, duel, quick_search
from infra.perf.tune.space import Knobs, Space
from infra.perf.tune.tuner import SearchMode, TuneReport, _search

SHIPPED, CANDIDATE = Knobs(1, 8, False), Knobs(2, 8, False)
SPACE = Space(instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,))


def _point(knobs: Knobs, concurrency: int, rps: float, p99_ms: float = 2.0) -> Point:
    return Point(knobs, concurrency, rps, 1.0, 1.5, p99_ms, 0, 3, 0.01, True)


class _Server:
    """Scripted rates per config; records every load and measurement, in order."""

    def __init__(self, rates: dict[Knobs, Iterator[float]]) -> None:
        self.rates = rates
        self.log: list[tuple[str, Knobs]] = []

    def prepare(self, knobs: Knobs) -> None:
        self.log.append(("load", knobs))

    def measure(self, knobs: Knobs, concurrency: int) -> Point:
        self.log.append(("measure", knobs))
        return _point(knobs, concurrency, next(self.rates[knobs]))


def _drifting() -> _Server:
    """Two equal configs on a server that speeds up 5% of 100 rps per measurement."""
    clock = itertools.count()
    rates = (100.0 + 5 * next(clock) for _ in itertools.count())
    return _Server({SHIPPED: rates, CANDIDATE: rates})


def test_pairs_alternate_so_a_steady_drift_favours_neither() -> None:
    server = _drifting()
    search = Search(Settings(budget_ms=50, pairs=3))
    old, new = _point(SHIPPED, 4, 100), _point(CANDIDATE, 8, 100)
    old_points: list[Point] = []
    new_points: list[Point] = []
    result = duel(
        search, old, new, server.prepare, server.measure, CANDIDATE, CLIMB_GAIN,
        (old_points, new_points),
    )  # fmt: skip
    measured = [k for what, k in server.log if what == "measure"]
    assert measured == [CANDIDATE, SHIPPED, SHIPPED, CANDIDATE, CANDIDATE, SHIPPED]  # ABBA
    assert [k for what, k in server.log if what == "load"] == [SHIPPED, CANDIDATE, SHIPPED]
    assert result.ratios == pytest.approx((100 / 105, 115 / 110, 120 / 125))
    assert not result.won  # the later measurement wins each pair, whichever config it is
    assert [p.concurrency for p in old_points] == [4] * 3  # each at its own best concurrency
    assert [p.concurrency for p in new_points] == [8] * 3


def test_a_candidate_must_win_every_pair_and_the_median_by_the_margin() -> None:
    def result(ratios: tuple[float, ...]) -> bool:
        server = _Server({SHIPPED: iter([100.0] * 3), CANDIDATE: iter(r * 100 for r in ratios)})
        search = Search(Settings(budget_ms=50, pairs=3))
        old, new = _point(SHIPPED, 4, 100), _point(CANDIDATE, 4, 108)
        won = duel(search, old, new, server.prepare, server.measure, None, CLIMB_GAIN, ([], []))
        return won.won

    assert result((1.08, 1.10, 1.06))
    assert not result((1.08, 0.99, 1.20))  # one lost pair
    assert not result((1.01, 1.01, 1.015))  # every pair, but inside the 2% margin


def test_a_duel_point_over_the_budget_or_failed_counts_as_lost() -> None:
    server = _Server({SHIPPED: iter([100.0] * 3), CANDIDATE: iter([120.0] * 3)})
    over = _Server.measure

    def measure(knobs: Knobs, concurrency: int) -> Point:
        point = over(server, knobs, concurrency)
        return _point(knobs, concurrency, point.throughput_rps, p99_ms=80.0)  # budget: 50 ms

    search = Search(Settings(budget_ms=50, pairs=3))
    old, new = _point(SHIPPED, 4, 100), _point(CANDIDATE, 4, 108)
    result = duel(search, old, new, server.prepare, measure, None, CLIMB_GAIN, ([], []))
    assert result.ratios == (0.0, 0.0, 0.0) and not result.won


@pytest.mark.parametrize(("candidate", "climbs"), [([108.0] * 3, True), ([108, 95, 108], False)])
def test_the_climb_settles_a_gain_inside_the_drift(candidate: list[float], climbs: bool) -> None:
    # 2 instances: +8% against a 15% drift; the duel decides
    server = _Server({SHIPPED: iter([100.0] * 4), CANDIDATE: iter([108.0, *candidate])})
    search = Search(Settings(budget_ms=50, concurrency=(4,), pairs=3))
    search.drift = 0.15
    quick_search(search, SPACE, SHIPPED, server.prepare, server.measure, lambda *a: None)
    verb = "climbed" if climbs else "did not climb"
    wins = 3 if climbs else 2
    [note] = [n for n in search.notes if "inside the spread" in n]
    assert note.startswith(f"{verb} from {SHIPPED.label()} to {CANDIDATE.label()}")
    assert f"won {wins} of 3 pairs" in note
    assert [d.won for d in search.duels] == [climbs]
    assert len(search.points) == 2 + 6  # both sweeps, then three pairs
    assert all(p.drift == 0.15 for p in search.points)


def test_no_pairs_keeps_the_incumbent_without_measuring_more() -> None:
    server = _Server({SHIPPED: iter([100.0]), CANDIDATE: iter([108.0])})
    search = Search(Settings(budget_ms=50, concurrency=(4,), pairs=0))
    search.drift = 0.15
    quick_search(search, SPACE, SHIPPED, server.prepare, server.measure, lambda *a: None)
    assert len(search.points) == 2 and not search.duels
    assert any(n.startswith("did not climb") for n in search.notes)


@pytest.mark.parametrize(("candidate", "chosen"), [(130.0, True), (104.0, False)])
def test_the_choice_against_the_shipped_config_is_settled_too(
    candidate: float, chosen: bool
) -> None:
    # the shipped config drifts 50% (100 / 80 / 120); the candidate is steady
    shipped_rates = itertools.cycle([100.0, 80.0, 120.0])
    server = _Server({SHIPPED: shipped_rates, CANDIDATE: itertools.repeat(candidate)})
    settings = Settings(budget_ms=50, concurrency=(4,), repeats=3, pairs=3)
    report = TuneReport("m", SearchMode.full, settings, SHIPPED, Search(settings))
    _search(report, SPACE, server.prepare, server.measure, lambda *a: None)
    assert report.drift == pytest.approx(0.5)
    assert report.duel is not None and report.duel.won is chosen
    assert report.improves is chosen
    assert chosen is False or not report.inside_noise  # a won duel is no longer noise
    data = report.to_dict()
    assert data["pairs"] == 3 and data["duels"][-1]["won"] is chosen
    assert data["duels"][-1]["incumbent"] == SHIPPED.label()
    if chosen:
        assert data["choice"]["label"] == CANDIDATE.label()
        assert any(n.startswith(f"chose {CANDIDATE.label()}") for n in report.notes)
    else:
        assert data["choice"]["label"] == SHIPPED.label()
        [kept] = [n for n in report.notes if n.startswith("kept the shipped config")]
        assert "back to back" in kept


def test_the_climb_never_duels_a_config_against_itself() -> None:
    """A step along an axis that means nothing here (preferred sizes without the dynamic
    batcher) lands on the same config; after a lost duel raised that config's own best, it
    looked like a gain inside the noise, and the climb measured the config against itself."""
    space = Space(
        instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,), preferred=(False, True)
    )
    server = _Server({SHIPPED: iter([100.0, *[110.0] * 3]), CANDIDATE: iter([108.0] * 4)})
    search = Search(Settings(budget_ms=50, concurrency=(4,), pairs=3))
    search.drift = 0.15
    quick_search(search, space, SHIPPED, server.prepare, server.measure, lambda *a: None)
    assert [(d.incumbent, d.candidate) for d in search.duels] == [(SHIPPED, CANDIDATE)]
    assert len(search.points) == 2 + 6  # both sweeps and one duel, nothing more


def test_an_interrupted_duel_still_reports_the_points_it_measured() -> None:
    """Ctrl-C half-way through the final duel: the report holds every point measured so far
    (before, a duel's points were filed only when it returned)."""

    def run(stop_at: int | None) -> tuple[int, TuneReport]:
        server = _Server(
            {SHIPPED: itertools.cycle([100.0, 80.0, 120.0]), CANDIDATE: itertools.repeat(104.0)}
        )
        calls = itertools.count(1)

        def measure(knobs: Knobs, concurrency: int) -> Point:
            if next(calls) == stop_at:
                raise KeyboardInterrupt
            return server.measure(knobs, concurrency)

        settings = Settings(budget_ms=50, concurrency=(4,), repeats=3, pairs=3)
        report = TuneReport("m", SearchMode.full, settings, SHIPPED, Search(settings))
        with contextlib.suppress(KeyboardInterrupt):
            _search(report, SPACE, server.prepare, measure, lambda *a: None)
        return next(calls) - 1, report

    def reported(report: TuneReport) -> int:
        return len(report.shipped_points) + len(report.repeats) + report.measurements

    measured, whole = run(None)
    assert whole.duel is not None and reported(whole) == measured
    stop_at = measured - 1  # the duel's last point: two of each config were measured
    made, cut = run(stop_at)
    assert cut.duel is None and made == stop_at and reported(cut) == stop_at - 1
    assert len(cut.shipped_points) == len(whole.shipped_points) - 1
    assert len(cut.search.points) == len(whole.search.points) - 1


def test_one_comparison_duelled_twice_says_one_result() -> None:
    """The climb duelled the candidate against the shipped config (won 1 of 1, +20 %), then the
    final duel measured the same two again (won 0 of 1, -9 %): tune printed both lines (issue 49
    item 6). Now the pairs are one duel, said once, and the choice follows all of them."""
    shipped_rates = itertools.cycle([100.0, 80.0, 120.0])  # drifts 50 %: gains are noise
    candidate_rates = iter([108.0, 120.0, 91.0])  # its sweep, the climb's pair, the final pair
    server = _Server({SHIPPED: shipped_rates, CANDIDATE: candidate_rates})
    settings = Settings(budget_ms=50, concurrency=(4,), repeats=3, pairs=1)
    report = TuneReport("m", SearchMode.quick, settings, SHIPPED, Search(settings))
    _search(report, SPACE, server.prepare, server.measure, lambda *a: None)
    said = [n for n in report.notes if " pairs " in n]
    assert len(said) == 1, said
    [ratios] = [d["ratios"] for d in report.to_dict()["duels"]]
    assert len(ratios) == 2 and min(ratios) <= 1 < max(ratios)  # one pair won, one lost
    assert "won 1 of 2 pairs" in said[0] and said[0].startswith("kept the shipped config")
    assert report.to_dict()["choice"]["label"] == SHIPPED.label()


@pytest.mark.parametrize(("gpu", "option"), [(False, "threads-2"), (False, ""), (True, "")])
def test_a_config_chosen_without_a_gpu_says_so(gpu: bool, option: str) -> None:
    """The tuned BERT config set a CPU thread count chosen on the CPU stand-in, without a word
    (issue 49 item 6): a choice made on a server without a GPU says so and how to re-tune."""
    tuned = Knobs(2, 8, False, accelerator=option)
    space = Space(instances=(1, 2), max_batch_size=(8,), dynamic_batching=(False,))
    space = replace(space, accelerators=("", option) if option else ("",))
    rates: dict[Knobs, Iterator[float]] = defaultdict(lambda: itertools.repeat(90.0))
    server = _Server(rates | {SHIPPED: itertools.repeat(100.0), tuned: itertools.repeat(200.0)})
    settings = Settings(budget_ms=50, concurrency=(4,), pairs=1)
    report = TuneReport("m", SearchMode.full, settings, SHIPPED, Search(settings), gpu=gpu)
    _search(report, space, server.prepare, server.measure, lambda *a: None)
    assert report.improves and report.choice is not None and report.choice.knobs == tuned
    said = [n for n in report.to_dict()["notes"] if n.startswith("chosen on CPU")]
    assert len(said) == (0 if gpu else 1)
    if said:
        assert "re-tune on the serving GPU with tdk tune --url" in said[0]
        assert (f"{option} is a CPU-only setting" in said[0]) == bool(option)
