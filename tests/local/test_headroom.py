"""A pod keeps room for its next load (``--headroom-models``, issue 46: cold p99 within the
download + Triton's load): once a load fills the memory budget, the least recently used idle
model is unloaded in the background, so the next cold request finds its memory free instead of
waiting for Triton to finish an unload first. Never a model with a request in flight, never
above the budget. Driven step by step against a Triton stand-in that holds each unload until
the test finishes it."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from pathlib import Path

import pytest

from infra.targets.local import budget
from infra.targets.local.manager import ModelManager
from infra.targets.local.options import EndpointOptions
from packager.manifest import Manifest
from packager.publish import publish
from packager.stores import open_store
from tests.local.triton_standin import TritonStandIn

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "/v2/repository/models"
A, B, C, D = (f"echo-{i}.tar.gz" for i in range(4))
#: how long a step the test waits for may take before the test fails (not a synchronisation:
#: every wait below ends on the request it waits for)
GUARD_S = 60.0


@pytest.fixture(scope="module")
def echoes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release of four copies of the bench's ``echo`` model (one Python stub each)."""
    work = tmp_path_factory.mktemp("echoes")
    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.write_extra(work / "repo", "echo")
    publish([work / "repo"], open_store(str(work / "store")), copies=4)
    return work / "store"


def test_a_full_pod_unloads_ahead_of_the_next_load(echoes: Path, tmp_path: Path) -> None:
    asyncio.run(_ahead(echoes, tmp_path))


async def _ahead(release: Path, tmp_path: Path) -> None:
    manifest = Manifest.from_json((release / "manifest.json").read_text())
    one = budget.estimate(manifest.by_target_model(A))
    triton = TritonStandIn()
    await triton.start()
    options = EndpointOptions(
        release=str(release),
        max_loaded=100,
        memory_budget=3 * one,  # three copies fit
        headroom_models=1,
        triton_url=triton.url,
        model_dir=str(tmp_path / "models"),
        workdir=str(tmp_path / "work"),
    )
    manager = ModelManager(options, None)
    await manager.start()
    name = {target: manager.models[target].entry.name for target in (A, B, C, D)}

    async def unloaded(target: str, after: int = 0) -> int:
        path = f"{REPOSITORY}/{name[target]}/unload"
        return await asyncio.wait_for(triton.wait_for(path, after), GUARD_S)

    try:
        await manager.ready.wait()
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
    finally:
        await manager.stop()
        await triton.stop()


def test_a_model_whose_first_request_waits_is_never_the_victim(
    echoes: Path, tmp_path: Path
) -> None:
    """Between a model's load and its first request's count in ``inflight``, the request is
    ``pending`` and the model unused (last_used 0): the least recently used idle model on paper.
    The background unload for headroom chose it there once (CI: the last model loaded twice)."""
    asyncio.run(_pending(echoes, tmp_path))


async def _pending(release: Path, tmp_path: Path) -> None:
    triton = TritonStandIn()
    await triton.start()
    options = EndpointOptions(
        release=str(release),
        max_loaded=100,
        triton_url=triton.url,
        model_dir=str(tmp_path / "models"),
        workdir=str(tmp_path / "work"),
    )
    manager = ModelManager(options, None)
    await manager.start()
    try:
        await manager.ready.wait()
        manager.release(await manager.acquire(A))
        state = manager.models[A]
        later = time.monotonic() + 10  # long idle by any grace
        assert manager._victim(later, idle_only=True) is state
        state.pending, state.last_used = 1, 0.0  # loaded, its first request not yet counted
        assert manager._victim(later, idle_only=True) is None
    finally:
        await manager.stop()
        await triton.stop()
