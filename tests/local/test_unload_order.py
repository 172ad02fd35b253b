"""A model evicted and asked for again at once is loaded only once Triton has finished unloading
it (SageMaker MME: a load of a model still unloading waits for the unload), driven step by step
against a Triton stand-in that holds each unload until the test finishes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.local.triton_standin import managed

A, B = "tokenizer-0.tar.gz", "tokenizer-1.tar.gz"
REPOSITORY = "/v2/repository/models"


def test_a_model_asked_for_while_triton_unloads_it_loads_after_the_unload(
    release: Path, tmp_path: Path
) -> None:
    asyncio.run(_evict_then_ask_again(release, tmp_path))


async def _evict_then_ask_again(release: Path, tmp_path: Path) -> None:
    # min_residency 0: a busy model may be swapped at once, no wait on the clock
    async with managed(release, tmp_path, max_loaded=1, min_residency=0) as (manager, triton):
        manager.release(await manager.acquire(A))
        manager.release(await manager.acquire(B))  # A evicted: Triton holds it UNLOADING
        a, b = manager.models[A].entry.name, manager.models[B].entry.name
        assert triton.states == {a: "UNLOADING", b: "READY"}
        mark = len(triton.received)
        again = asyncio.create_task(manager.acquire(A))  # B evicted for it
        unload_b = await triton.wait_for(f"{REPOSITORY}/{b}/unload", after=mark)
        # the front's next request on that connection comes once it has acted on B's unload
        # (a load of A sent at once would be that request; the index poll of a waiting load
        # otherwise): only then does Triton finish unloading A
        await triton.wait_for(None, unload_b + 1, triton.received[unload_b].connection)
        triton.finish_unload(a)
        manager.release(await again)
        loads = [r for r in triton.received[mark:] if r.path == f"{REPOSITORY}/{a}/load"]
        assert [r.state for r in loads] == ["UNAVAILABLE"], "A was loaded while Triton unloaded it"
        assert manager.status()["loaded"] == [A]
