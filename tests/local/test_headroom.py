"""A pod keeps room for its next load (``--headroom-models``, issue 46: cold p99 within the
download + Triton's load): once a load fills the memory budget, the least recently used idle
model is unloaded in the background, so the next cold request finds its memory free instead of
waiting for Triton to finish an unload first; up to ``--headroom-max-models`` as cold loads come
faster than unloads end; and two cold requests short of room each start an unload instead of
queueing behind one. Never a model with a request in flight, never above the budget. Driven
step by step against a Triton stand-in that holds each unload until the test finishes it."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from pathlib import Path

import pytest

from infra.targets.local import budget
from infra.targets.local.capacity import wanted_headroom
from infra.targets.local.manager import ModelManager
from packager.manifest import Manifest
from packager.publish import publish
from packager.stores import open_store
from tests.local.triton_standin import managed

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "/v2/repository/models"
A, B, C, D, E = (f"echo-{i}.tar.gz" for i in range(5))
#: how long a step the test waits for may take before the test fails (not a synchronisation:
#: every wait below ends on the request it waits for)
GUARD_S = 60.0


@pytest.fixture(scope="module")
def echoes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release of five copies of the bench's ``echo`` model (one Python stub each)."""
    work = tmp_path_factory.mktemp("echoes")
    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.write_extra(work / "repo", "echo")
    publish([work / "repo"], open_store(str(work / "store")), copies=5)
    return work / "store"


def test_a_full_pod_unloads_ahead_of_the_next_load(echoes: Path, tmp_path: Path) -> None:
    asyncio.run(_ahead(echoes, tmp_path))


async def _ahead(release: Path, tmp_path: Path) -> None:
    one = _one(release)
    budgeted = managed(release, tmp_path, max_loaded=100, memory_budget=3 * one, headroom_models=1)
    async with budgeted as (manager, triton):  # three copies fit
        name = _names(manager)

        async def unloaded(target: str, after: int = 0) -> int:
            path = f"{REPOSITORY}/{name[target]}/unload"
            return await asyncio.wait_for(triton.wait_for(path, after), GUARD_S)

        manager.release(await manager.acquire(A))
        held = await manager.acquire(B)  # in flight until the end: never unloaded
        manager.release(await manager.acquire(C))  # the budget is full: A goes, with no request
        await unloaded(A)
        assert triton.states[name[A]] == "UNLOADING" and manager.status()["loaded"] == [C, B]
        mark = len(triton.received)
        triton.finish_unload(name[A])
        # D's room was made before it came: its load goes to Triton while Triton still holds B
        # and C (no unload finishes before it); then room again: C, the least recently used idle
        manager.release(await manager.acquire(D))
        await unloaded(C, mark)
        loads = [r for r in triton.received if r.path.endswith("/load")]
        # every request the stand-in saw, with its connection, so a recurrence of the double
        # load seen once in CI (D loaded twice at load ~3, not reproduced in 65 runs) names how
        seen = [(r.path, r.connection, r.state, r.held) for r in triton.received]
        assert [r.path for r in loads] == [f"{REPOSITORY}/{name[t]}/load" for t in (A, B, C, D)], (
            seen
        )
        assert [r.held for r in loads] == [0, 1, 2, 2], "past the budget, or waited for an unload"
        assert not any(r.path == f"{REPOSITORY}/{name[B]}/unload" for r in triton.received)
        manager.release(held)


def test_a_model_whose_first_request_waits_is_never_the_victim(
    echoes: Path, tmp_path: Path
) -> None:
    """Between a model's load and its first request's count in ``inflight``, the request is
    ``pending`` and the model unused (last_used 0): the least recently used idle model on paper.
    The background unload for headroom chose it there once (CI: the last model loaded twice)."""
    asyncio.run(_pending(echoes, tmp_path))


async def _pending(release: Path, tmp_path: Path) -> None:
    async with managed(release, tmp_path, max_loaded=100) as (manager, _):
        manager.release(await manager.acquire(A))
        state = manager.models[A]
        later = time.monotonic() + 10  # long idle by any grace
        assert manager._victim(later, idle_only=True) is state
        state.pending, state.last_used = 1, 0.0  # loaded, its first request not yet counted
        assert manager._victim(later, idle_only=True) is None


def _one(release: Path) -> int:
    """The memory one copy is counted to need."""
    manifest = Manifest.from_json((release / "manifest.json").read_text())
    return budget.estimate(manifest.by_target_model(A))


def _names(manager: ModelManager) -> dict[str, str]:
    return {target: manager.models[target].entry.name for target in (A, B, C, D, E)}


def test_two_cold_requests_short_of_room_each_start_an_unload(echoes: Path, tmp_path: Path) -> None:
    """The second of two cold requests on a full pod does not count on the unload the first
    started (it is the first's): it starts its own, so it waits for one unload, not two in turn."""
    asyncio.run(_two_short(echoes, tmp_path))


async def _two_short(release: Path, tmp_path: Path) -> None:
    one = _one(release)
    # two copies fit, no headroom: each load makes its own room; min_residency 0: no clock
    full = managed(release, tmp_path, max_loaded=100, memory_budget=2 * one, min_residency=0)
    async with full as (manager, triton):
        name = _names(manager)
        manager.release(await manager.acquire(A))
        manager.release(await manager.acquire(B))
        first = asyncio.create_task(manager.acquire(C))  # A goes for it
        await asyncio.wait_for(triton.wait_for(f"{REPOSITORY}/{name[A]}/unload"), GUARD_S)
        second = asyncio.create_task(manager.acquire(D))  # B goes for it, A still unloading
        await asyncio.wait_for(triton.wait_for(f"{REPOSITORY}/{name[B]}/unload"), GUARD_S)
        assert triton.states[name[A]] == "UNLOADING", "B's unload waited for A's to finish"
        triton.finish_unload(name[A])
        triton.finish_unload(name[B])
        manager.release(await first)
        manager.release(await second)
        loads = [r for r in triton.received if r.path.endswith("/load")]
        assert len(loads) == 4 and max(r.held for r in loads) <= 1, "past the budget"


def test_the_room_grows_while_cold_loads_outpace_unloads(echoes: Path, tmp_path: Path) -> None:
    """With unloads measured at 2 s and three cold loads within the arrival window, a pod whose
    front may keep up to three models' room (``--headroom-max-models 3``) unloads ahead as soon
    as fewer than three are free, where one model's room (the floor) would still be enough."""
    asyncio.run(_grows(echoes, tmp_path))


async def _grows(release: Path, tmp_path: Path) -> None:
    one = _one(release)
    options = {"memory_budget": 5 * one, "headroom_models": 1, "headroom_max": 3}
    async with managed(release, tmp_path, max_loaded=100, **options) as (manager, triton):
        name = _names(manager)
        manager._unload_s = 2.0  # the unloads' measured average (Triton reports each one's end)
        for target in (A, B, C):
            manager.release(await manager.acquire(target))
        # 3 loads in 10 s over 2 s each: 0.6 expected, 3 with the margin; 2 free: A goes
        assert manager.status()["headroom_models"] == 3
        await asyncio.wait_for(triton.wait_for(f"{REPOSITORY}/{name[A]}/unload"), GUARD_S)
        manager.release(await manager.acquire(D))  # 2 free again: B goes too, A unloading
        await asyncio.wait_for(triton.wait_for(f"{REPOSITORY}/{name[B]}/unload"), GUARD_S)
        assert triton.states[name[A]] == triton.states[name[B]] == "UNLOADING"
        loads = [r for r in triton.received if r.path.endswith("/load")]
        assert max(r.held for r in loads) <= 4, "past the budget"


def test_the_room_shrinks_back_once_the_cold_loads_stop(echoes: Path, tmp_path: Path) -> None:
    """The rate is of the last 10 s however long ago the last cold load came: an idle pod's
    status (and its next load) sees the floor again, not the room of its last burst."""
    asyncio.run(_shrinks(echoes, tmp_path))


async def _shrinks(release: Path, tmp_path: Path) -> None:
    options = {"memory_budget": 5 * _one(release), "headroom_models": 1, "headroom_max": 3}
    async with managed(release, tmp_path, max_loaded=100, **options) as (manager, _):
        manager._unload_s = 2.0
        manager.release(await manager.acquire(A))  # the size of a model, and one arrival
        burst = time.monotonic() - 1.0
        manager._arrivals.extend([burst] * 4)
        assert manager.headroom_models() == 3
        manager._arrivals.clear()
        manager._arrivals.extend([time.monotonic() - 60.0] * 5)  # a burst a minute ago
        assert manager.headroom_models() == 1


@pytest.mark.parametrize(
    ("floor", "most", "rate", "unload_s", "wanted"),
    [
        (1, 0, 10.0, 5.0, 1),  # no maximum: a fixed room
        (1, 1, 10.0, 5.0, 1),
        (1, 4, 0.0, 5.0, 1),  # no cold load lately
        (1, 4, 1.0, 0.0, 1),  # no unload measured yet
        (1, 4, 0.5, 2.0, 3),  # 1 expected during an unload, 3 with two deviations
        (1, 4, 0.05, 2.0, 1),  # 0.1 expected: 0.73 with the margin
        (2, 4, 0.05, 2.0, 2),
        (1, 4, 100.0, 2.0, 4),  # at most the maximum
        (1, 4, -1.0, 2.0, 1),
    ],
)
def test_wanted_headroom(floor: int, most: int, rate: float, unload_s: float, wanted: int) -> None:
    assert wanted_headroom(floor, most, rate, unload_s) == wanted


def test_a_huge_maximum_still_leaves_room_for_one_model(echoes: Path, tmp_path: Path) -> None:
    """``--headroom-max-models 1000`` with a burst of cold loads: the room is clamped so that
    one model like the last one loaded still fits the memory budget (5 models: room 4), and
    ``--max-loaded-models`` (3: room 2), never the wanted count."""
    asyncio.run(_clamped(echoes, tmp_path))


async def _clamped(release: Path, tmp_path: Path) -> None:
    one = _one(release)
    by_memory = {"memory_budget": 5 * one, "headroom_models": 1, "headroom_max": 1000}
    for max_loaded, room in ((100, 4), (3, 2)):
        async with managed(release, tmp_path / str(max_loaded), max_loaded=max_loaded,
                           **by_memory) as (manager, _):  # fmt: skip
            manager._unload_s = 2.0
            manager.release(await manager.acquire(A))  # the size of a model, and one arrival
            manager._arrivals.extend([time.monotonic() - 1.0] * 500)  # 50 a second
            assert wanted_headroom(1, 1000, 50.0, 2.0) > 100  # what the burst alone asks
            assert manager.headroom_models() == room
