"""``tdk plan --mme-trace``: the multi-model flight simulator (issue 46 item 7)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.perf.plan import mme_trace as sim
from tdk.errors import UsageError

runner = CliRunner()


def zipf_trace(requests: int, copies: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    names = [f"bert-{i}" for i in range(copies)]
    return rng.choices(names, weights=[1 / (i + 1) for i in range(copies)], k=requests)


def test_one_pod_is_one_lru_cache() -> None:
    flight = sim.simulate(["a", "b", "a", "c", "a", "b"], pods=1, budget=2)
    # a miss, b miss, a hit, c miss (b out), a hit, b miss (c out)
    assert (flight.hits, flight.loads, flight.evictions, flight.max_loaded) == (2, 4, 2, 2)


def test_headroom_unloads_ahead_of_the_next_load() -> None:
    """A pod that keeps one model's room free (the front's --headroom-models 1) holds
    budget - 1 between loads: the least recently used goes as soon as a load fills it."""
    flight = sim.simulate(["a", "b", "c", "a", "c", "b"], pods=1, budget=3, headroom=1)
    # a, b miss; c miss (a out ahead); a miss (b out); c hit; b miss (a out)
    assert (flight.hits, flight.loads, flight.evictions, flight.max_loaded) == (1, 5, 3, 3)
    assert sim.simulate(["a", "a"], pods=1, budget=1, headroom=1).hits == 1  # one kept: no room


@pytest.mark.parametrize("concurrency", [1, 8])
def test_hashing_beats_round_robin_and_never_passes_the_budget(concurrency: int) -> None:
    trace = zipf_trace(4000, 1000)
    hashed = sim.simulate(trace, 4, 20, "hash", concurrency)
    spread = sim.simulate(trace, 4, 20, "round_robin", concurrency)
    assert hashed.hit_ratio >= 1.3 * spread.hit_ratio
    assert hashed.max_loaded <= 20 and spread.max_loaded <= 20
    assert hashed.hits + hashed.loads + hashed.waited == len(trace)


def test_a_hot_model_spills_to_a_second_pod_under_concurrency() -> None:
    """The bounded load (hash-balance-factor): eight requests for one model at once do not all
    queue on its pod; without concurrency nothing spills."""
    trace = ["hot"] * 80
    assert sim.simulate(trace, 4, 5, "hash", 1).spilled == 0
    spread = sim.simulate(trace, 4, 5, "hash", 8)
    assert spread.spilled > 0 and spread.loads >= 2  # loaded on a second pod too


def test_the_default_bound_does_not_spill_requests_that_wait_for_loads() -> None:
    """At a fleet's low concurrency (8 clients on 4 pods) most requests in flight wait for a
    load: the stacks' bound (Envoy at 150, infra.planning.routing) spills few of them to pods
    that would load the model again; HAProxy at 150, stricter, spilled 19 % of this trace."""
    trace = zipf_trace(3000, 1000)
    costs = sim.Measured(download_ms=50, load_ms=3000, warm_ms=8)
    flight = sim.simulate(trace, 4, 20, "hash", 8, costs=costs, headroom=1)
    assert flight.spilled < 0.1 * len(trace)


def test_the_ring_moves_few_models_when_a_pod_joins() -> None:
    names = [f"m-{i}" for i in range(2000)]
    four, five = sim.Ring(4), sim.Ring(5)
    moved = sum(next(four.walk(n)) != next(five.walk(n)) for n in names)
    assert moved < 0.35 * len(names)  # about a fifth move to the new pod, none elsewhere


def test_cheapest_reaches_the_goal_at_the_lowest_price() -> None:
    trace = zipf_trace(3000, 300)
    costs = sim.Measured(download_ms=40, load_ms=1500, warm_ms=1)
    options = sim.fleet(trace, costs, 2.0, 6, [10, 40])
    best = sim.cheapest(options, 0.5)
    assert best is not None and best.flight.hit_ratio >= 0.5
    assert all(o.usd_per_hour >= best.usd_per_hour for o in options if o.flight.hit_ratio >= 0.5)
    assert sim.cheapest(options, 1.0) is None


def test_a_trace_is_read_bounded_and_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("time,target_model\n0.1,bert-1.tar.gz\n0.2,bert-2\n")
    assert sim.read_trace(path) == ["bert-1", "bert-2"]
    path.write_text("bert-1\n../etc/passwd\n")
    with pytest.raises(UsageError, match="line 2"):
        sim.read_trace(path)
    path.write_text("\n\n")
    with pytest.raises(UsageError, match="no request"):
        sim.read_trace(path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(Exception, match="fifo"):  # refused, never waited on
        sim.read_trace(fifo)


def _files(tmp_path: Path, **bench: object) -> tuple[Path, Path]:
    trace, measured = tmp_path / "trace.txt", tmp_path / "bench.json"
    trace.write_text("\n".join(f"{n}.tar.gz" for n in zipf_trace(2000, 200)))
    values = {"download_p50_ms": 40, "triton_load_p50_ms": 1500, "warm_p50_ms": 1.2, "clients": 4}
    measured.write_text(json.dumps({**values, **bench}))
    return trace, measured


def test_plan_mme_trace_chooses_pods_and_budget(tmp_path: Path) -> None:
    trace, measured = _files(tmp_path)
    args = ["plan", str(measured), "--mme-trace", str(trace), "--target", "gke",
            "--hit-ratio", "0.5", "--budget", "20", "--budget", "40", "--max-pods", "4",
            "--baseline", "ml.g5.xlarge:1.408", "--json"]  # fmt: skip
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    plan = json.loads(done.output)
    choice = plan["choice"]
    assert choice["hit_ratio"] >= 0.5 and choice["budget"] in (20, 40)
    assert len(plan["options"]) == 8 and plan["requests"] == 2000
    assert plan["baseline"]["option"].endswith("ml.g5.xlarge:1.408")
    assert plan["cold_ms"] == pytest.approx(1541.2)
    human = runner.invoke(app, args[:-1])
    assert human.exit_code == 0 and "choice:" in human.output, human.output


def test_plan_mme_trace_keeps_the_measured_runs_headroom(tmp_path: Path) -> None:
    """Pods that keep a model's room free (bench/mme_k8s.py's headroom_models) hold one model
    fewer between loads: the plan replays them so."""
    ratios = []
    for headroom in (0, 1):
        trace, measured = _files(tmp_path, headroom_models=headroom)
        args = ["plan", str(measured), "--mme-trace", str(trace), "--target", "gke",
                "--budget", "5", "--max-pods", "2", "--json"]  # fmt: skip
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        ratios.append([o["hit_ratio"] for o in json.loads(done.output)["options"]])
    assert all(kept < full for full, kept in zip(*ratios, strict=True)), ratios
    for broken_key, value in (("headroom_models", -1), ("headroom_p50", "3"), ("headroom_p50", -1)):
        _, broken = _files(tmp_path, **{broken_key: value})
        args = ["plan", str(broken), "--mme-trace", str(trace), "--target", "gke"]
        done = runner.invoke(app, args)
        assert done.exit_code != 0 and broken_key in done.output


def test_plan_mme_trace_replays_the_room_the_replicas_kept(tmp_path: Path) -> None:
    """A run whose room grew with the cold loads (headroom_p50, the median the replicas kept)
    is replayed with that room, not the floor it started from."""
    _, measured = _files(tmp_path, headroom_models=1, headroom_p50=3)
    assert sim.load_measured(measured).headroom == 3
    _, floor = _files(tmp_path, headroom_models=1)
    assert sim.load_measured(floor).headroom == 1


def test_plan_mme_trace_refuses_what_it_cannot_plan(tmp_path: Path) -> None:
    trace, measured = _files(tmp_path)
    done = runner.invoke(app, ["plan", str(measured), "--mme-trace", str(trace)])
    assert done.exit_code != 0 and "--target" in done.output
    _, broken = _files(tmp_path, triton_load_p50_ms="slow")
    done = runner.invoke(app, ["plan", str(broken), "--mme-trace", str(trace), "--target", "gke"])
    assert done.exit_code != 0 and "triton_load_p50_ms" in done.output and "mme_k8s" in done.output


def test_a_leaving_replica_takes_its_models_with_it() -> None:
    trace = zipf_trace(3000, 100)
    stay = sim.simulate(trace, 4, 25, "hash")
    leave = sim.simulate(trace, 4, 25, "hash", changes=[(1500, "leave")])
    assert leave.loads > stay.loads and leave.max_loaded <= 25
    with pytest.raises(UsageError, match="join or leave"):
        sim.simulate(trace, 1, 25, "hash", changes=[(10, "leave")])


def test_the_simulator_agrees_with_the_measured_multi_replica_run() -> None:
    """Issue 46: the simulator is trusted only as far as it agrees with a measured run. The
    run: bench/mme_k8s.py, 1,000 copies, 4 replicas x 20, 8 clients, a fifth replica joining
    at a third and the first leaving at two thirds (its own trace, committed)."""
    run = json.loads((Path(__file__).parent / "data" / "mme_run_2026-12-07.json").read_text())
    trace = [t.removesuffix(".tar.gz") for t in run["trace"]]
    costs = sim.Measured(run["download_p50_ms"], run["triton_load_p50_ms"], run["warm_p50_ms"])
    changes = [(int(i), what) for i, what in run["replica_changes"]]
    hashed = sim.simulate(trace, run["replicas"], run["budget"], "hash", run["clients"], 1.5,
                          changes, costs, engine="haproxy")  # fmt: skip  # as the run was routed
    spread = sim.simulate(trace, run["replicas"], run["budget"], "round_robin", run["clients"],
                          costs=costs)  # fmt: skip
    assert abs(hashed.hit_ratio - run["hit_ratio"]) <= 0.05
    assert abs(spread.hit_ratio - run["round_robin_hit_ratio"]) <= 0.05
    assert hashed.max_loaded <= run["budget"] == run["max_loaded_per_replica"]
