"""A model evicted and asked for again at once, while Triton still unloads it: Triton never
gets a load of a name it is unloading (its index would say READY for the old instance's
unload). A model of one directory loads at once under its alias (``alias``), the other of its
two names; an ensemble, whose steps go with it, is loaded once the unload is done. Driven step by
step against a Triton stand-in that holds each unload until the test finishes it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from infra.targets.local.alias import alias_of
from infra.targets.local.errors import ApiError
from tests.local.triton_standin import TritonStandIn, managed

A, B = "tokenizer-0.tar.gz", "tokenizer-1.tar.gz"
PIPE_A, PIPE_B = "text_pipeline-0.tar.gz", "text_pipeline-1.tar.gz"
REPOSITORY = "/v2/repository/models"


def _loads(triton: TritonStandIn, mark: int, name: str) -> list[str | None]:
    """The state ``name`` was in at each of its loads since ``mark``."""
    return [r.state for r in triton.received[mark:] if r.path == f"{REPOSITORY}/{name}/load"]


async def _alias_then_own_name(release: Path, tmp_path: Path) -> None:
    """A model of one directory loads under its alias, then under its own name again."""
    # min_residency 0: a busy model may be swapped at once, no wait on the clock
    async with managed(release, tmp_path, max_loaded=1, min_residency=0) as (manager, triton):
        models = tmp_path / "models"
        manager.release(await manager.acquire(A))
        manager.release(await manager.acquire(B))  # A evicted: Triton holds it UNLOADING
        state = manager.models[A]
        a, b, alias = state.entry.name, manager.models[B].entry.name, alias_of(state.entry)
        assert triton.states == {a: "UNLOADING", b: "READY"}
        mark = len(triton.received)
        manager.release(await manager.acquire(A))  # B evicted; A loads while a unloads
        assert _loads(triton, mark, a) == [], "a load sent into the unload under way"
        assert _loads(triton, mark, alias) == [None]
        assert triton.states[a] == "UNLOADING" and triton.states[alias] == "READY"
        assert state.triton_name == alias and manager.status()["loaded"] == [A]
        config = (models / alias / "config.pbtxt").read_text()
        assert f'name: "{alias}"' in config  # the copy's config renamed, the original not
        assert f'name: "{a}"' in (models / a / "config.pbtxt").read_text()
        # the model file is the same file, not a copy
        assert (models / alias / "1" / "model.py").stat().st_ino == (
            models / a / "1" / "model.py"
        ).stat().st_ino

        mark = len(triton.received)
        manager.release(await manager.acquire(B))  # A (as its alias) evicted
        assert triton.states[alias] == "UNLOADING"
        triton.finish_unload(a)
        manager.release(await manager.acquire(A))  # its own name is free again
        assert _loads(triton, mark, a) == ["UNAVAILABLE"]
        assert _loads(triton, mark, alias) == []
        assert state.triton_name == a
        triton.finish_unload(alias)
        await asyncio.wait_for(state.unloads[alias], 30)  # Triton's index polled: done
        assert not (models / alias).exists()  # the alias's directory went with its unload
        assert (models / a / "config.pbtxt").is_file() and state.triton_name == a


async def _ensemble_waits(release: Path, tmp_path: Path) -> None:
    """An ensemble (its steps go with it) loads once Triton has finished unloading it."""
    async with managed(release, tmp_path, max_loaded=1, min_residency=0) as (manager, triton):
        manager.release(await manager.acquire(PIPE_A))
        manager.release(await manager.acquire(PIPE_B))  # A's ensemble and steps UNLOADING
        a = manager.models[PIPE_A].entry.name
        steps = [n for n, s in triton.states.items() if s == "UNLOADING"]
        assert a in steps
        mark = len(triton.received)
        again = asyncio.create_task(manager.acquire(PIPE_A))  # B evicted for it
        b = manager.models[PIPE_B].entry.name
        unload_b = await triton.wait_for(f"{REPOSITORY}/{b}/unload", after=mark)
        # the front's next request on that connection comes once it has acted on B's unload
        # (a load of A sent at once would be that request; the index poll of a waiting load
        # otherwise): only then does Triton finish unloading A
        await triton.wait_for(None, unload_b + 1, triton.received[unload_b].connection)
        for name in steps:
            triton.finish_unload(name)
        manager.release(await again)
        assert _loads(triton, mark, a) == ["UNAVAILABLE"], "A was loaded while Triton unloaded it"
        assert _loads(triton, mark, alias_of(manager.models[PIPE_A].entry)) == []
        assert manager.status()["loaded"] == [PIPE_A]


async def _alias_refused(release: Path, tmp_path: Path) -> None:
    """A load under a fresh alias that Triton refuses leaves no directory and the model's own
    name next; an alias Triton may still hold (a crashed stub's, loaded again) is kept."""
    async with managed(release, tmp_path, max_loaded=1, min_residency=0) as (manager, triton):
        models = tmp_path / "models"
        state = manager.models[A]
        a, alias = state.entry.name, alias_of(state.entry)
        manager.release(await manager.acquire(A))
        manager.release(await manager.acquire(B))  # A evicted: Triton holds it UNLOADING
        triton.refused.add(alias)
        with pytest.raises(ApiError, match="could not load"):
            await manager.acquire(A)
        assert not (models / alias).exists() and state.triton_name == a
        triton.refused.clear()
        manager.release(await manager.acquire(A))  # under its alias, made again
        assert state.triton_name == alias and (models / alias).is_dir()
        manager.reload_on_next_request(state)  # its stub crashed: Triton still holds the alias
        triton.refused.add(alias)
        with pytest.raises(ApiError, match="could not load"):
            await manager.acquire(A)
        assert state.triton_name == alias and (models / alias).is_dir()
        assert "~" not in str(state.failed)  # the error names the model, not its alias


@pytest.mark.parametrize(
    "scenario",
    [_alias_then_own_name, _alias_refused, _ensemble_waits],
    ids=["under-its-alias", "alias-refused", "ensemble-waits"],
)
def test_a_model_asked_for_while_triton_unloads_it(
    scenario: Callable[[Path, Path], Awaitable[None]], release: Path, tmp_path: Path
) -> None:
    asyncio.run(scenario(release, tmp_path))
