"""Loading a model into a local endpoint's Triton: a slot, the archive fetched into the disk
cache, Triton's load (out of memory: the least recently used idle model goes, one more try)."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from pathlib import Path

from infra.clients.triton_errors import triton_error_text
from infra.targets.local import alias, budget, cache
from infra.targets.local.alias import alias_of, aliasable
from infra.targets.local.capacity import Capacity
from infra.targets.local.errors import insufficient_memory, model_error, unavailable
from infra.targets.local.model_state import ModelState
from infra.targets.local.upstream import UpstreamError
from infra.triton_runtime.grpc_control import ControlUnreachable, GrpcControl
from packager.stores import Store
from tdk.errors import StoreError, TdkError

log = logging.getLogger("tdk.local")
FIRST = asyncio.FIRST_COMPLETED


def _since(started: float) -> tuple[float, float]:
    """Seconds since ``started``, and now (the next phase's start)."""
    now = time.monotonic()
    return now - started, now


class _OutOfMemory(Exception):
    """Triton's load failed for want of memory (``budget.out_of_memory``)."""


class Loading(Capacity):
    """The model manager's loads, single-flight per model (``_ensure_loaded`` starts one)."""

    disk: cache.DiskCache
    store: Store
    repository: Path
    workdir: Path
    loads: collections.deque[dict[str, object]]
    control: GrpcControl | None

    async def _load(self, state: ModelState) -> None:
        target = state.entry.target_model
        try:
            started = time.monotonic()
            while state.evicting or self._superseded(state):
                await self._wait_change(time.monotonic() + self.settings.capacity_timeout)
            if state.loaded:
                return
            state.drain_s, started = _since(started)
            await self._reserve_slot(state)
            self._keep_headroom(state)
            state.slot_s, started = _since(started)
            state.download_s = state.extract_s = 0.0
            aliased_now = False  # whether this load made the alias it goes under
            try:
                if not self.disk.has(state.entry):
                    await self._install(state)
                started = time.monotonic()
                aliased_now = await self._pick_name(state)
                state.unload_s, _ = _since(started)
                await self._load_or_evict(state)
            except BaseException:
                self.slots.discard(target)
                state.memory = 0
                if aliased_now:
                    self._forget_alias(state)
                self._notify()
                raise
            state.loaded = True
            state.failed = None
            state.loaded_at = time.monotonic()
            self.loads.append(
                {"target_model": target}
                | {f"{phase}_ms": round(ms, 3) for phase, ms in state.phases_ms().items()}
            )
        finally:
            state.loading = None

    async def _pick_name(self, state: ModelState) -> bool:
        """The Triton name to load ``state`` under (``state.triton_name``): the one it had,
        unless Triton still unloads it; then the other of its name and its alias (``alias``);
        when Triton unloads both, or the model cannot go under an alias, once the unload ends.
        Whether it made the alias's directory for this load."""
        entry = state.entry
        while True:
            names = [state.triton_name]
            if aliasable(entry):
                names.append(entry.name if state.aliased else alias_of(entry))
            free = [n for n in names if n not in state.unloads or state.unloads[n].done()]
            if not free:  # until the first of those unloads ends (never cancelled by this)
                await asyncio.wait([state.unloads[n] for n in names], return_when=FIRST)
                continue
            name = free[0]
            if name == state.triton_name or name == entry.name:
                state.triton_name = name
                return False
            try:
                await asyncio.to_thread(alias.make, self.repository, entry)
            except (OSError, TdkError) as exc:  # the unload is waited for instead
                log.warning("%s: cannot load it under an alias: %s", entry.target_model, exc)
                await asyncio.shield(state.unloads[state.triton_name])
                continue
            state.triton_name = name
            return True

    def _forget_alias(self, state: ModelState) -> None:
        """A load under an alias it had just made failed (Triton holds nothing under it): its
        directory goes, the model's own name is next."""
        if state.aliased and not state.loaded:
            alias.remove(self.repository, state.triton_name)
            state.triton_name = state.entry.name

    async def _install(self, state: ModelState) -> None:
        """Fetch and extract into what the disk cache has left beside the models that are
        loaded or loading (idle ones are trimmed after): the cache never grows past its size."""
        entry = state.entry
        room = self.disk.room(self.slots - {entry.target_model})
        try:
            if room <= 0:
                raise cache.ArchiveRejected(
                    f"the {self.settings.cache_bytes}-byte disk cache is taken by loaded models",
                    hint=cache.CACHE_HINT,
                )
            result = await asyncio.to_thread(
                cache.install,
                self.store,
                entry,
                self.repository,
                self.workdir / "staging",
                room,
                skip=self.disk.shared(),
                adapt=self.settings.triton_url is None,
            )
        except StoreError as exc:
            message = self._load_failed(state, f"cannot fetch {entry.target_model}: {exc.message}")
            raise model_error(message) from exc
        except TdkError as exc:
            fix = f" (hint: {exc.hint})" if exc.hint else ""
            message = self._load_failed(state, f"{entry.target_model} refused: {exc.message}{fix}")
            raise model_error(message) from exc
        self.metrics.observe("ModelDownloadingTime", result.download_s, entry.target_model)
        state.download_s, state.extract_s = result.download_s, result.extract_s
        self.disk.add(entry, result)
        idle = [s for s in self.models.values() if s.entry.target_model not in self.slots]
        self.disk.trim([s.entry for s in sorted(idle, key=lambda s: s.last_used)])

    async def _load_or_evict(self, state: ModelState) -> None:
        """Triton's load; out of memory, the least recently used idle model is unloaded and the
        load tried once more, then the request answers 507 (SageMaker's contract)."""
        try:
            await self._triton_load(state)
            return
        except _OutOfMemory:
            victim = self._victim(time.monotonic(), idle_only=True)
            if victim is not None:
                await self._evict(victim, time.monotonic() + self.settings.capacity_timeout)
                await self._settled()
        try:
            await self._triton_load(state)
        except _OutOfMemory as exc:
            self.disk.drop(state.entry)
            raise insufficient_memory(
                self._load_failed(
                    state, f"{state.entry.target_model} does not fit the memory left: {exc}"
                )
            ) from None

    async def _settled(self) -> None:
        """Until Triton reports every unload done (memory counted free only then)."""
        deadline = time.monotonic() + self.settings.capacity_timeout
        while self.unloading > 0 and time.monotonic() < deadline:
            await self._wait_change(deadline)

    async def _send_load(self, name: str) -> tuple[int, str]:
        """Triton's load of ``name``: its status and error text. Over gRPC where the front
        reaches that listener (``grpc_control``: an HTTP load holds one of Triton's HTTP threads
        and the inference requests behind it), else over HTTP."""
        try:
            if self.control is not None:
                answer = await self.control.load(name)
                return answer.status, answer.message
            response = await self.pool.request(
                "POST", f"/v2/repository/models/{name}/load", headers=self.triton.repository_headers
            )
        except (UpstreamError, ControlUnreachable) as exc:
            raise unavailable(
                f"the local Triton runtime failed while loading {name}: {exc}"
            ) from exc
        if response.status == 200:
            return 200, ""
        return response.status, triton_error_text(response.body)

    async def _triton_load(self, state: ModelState) -> None:
        name = state.triton_name
        started = time.monotonic()
        status, message = await self._send_load(name)
        if status != 200:
            message = message.replace(name, state.entry.name) if state.aliased else message
            if budget.out_of_memory(message):
                raise _OutOfMemory(message)
            self.disk.drop(state.entry)
            raise model_error(
                self._load_failed(
                    state, f"Triton could not load {state.entry.target_model}: {message}"
                ),
                original_status=status,
                original_message=message,
            )
        self.triton.protect_memory()
        state.load_s = time.monotonic() - started
        self.metrics.observe("ModelLoadingTime", state.load_s, state.entry.target_model)
        if self.settings.memory_budget:
            stats = await self.pool.request("GET", f"/v2/models/{name}/stats")
            used = budget.reported(stats.body) if stats.status == 200 else 0
            state.memory = used or state.memory
