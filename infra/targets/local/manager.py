"""What SageMaker MME does for Triton: load on first request, single-flight, LRU, restart.

All state lives on the front's event loop (no locks): a model is ``loaded`` in Triton or not,
holds a capacity slot while loading or loaded, and counts requests in flight. Beyond
``max_loaded`` slots the least recently used idle model is unloaded; when every loaded model is
busy, the one loaded longest ago is drained (new requests for it wait) once it has been resident
``min_residency`` seconds, then unloaded — never while a request for it is in flight.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from infra.clients.triton_errors import triton_error_text
from infra.targets.local import budget, cache, lock, workdir
from infra.targets.local.errors import (
    ApiError,
    insufficient_memory,
    model_error,
    not_ready,
    unavailable,
    validation,
)
from infra.targets.local.metrics import Metrics
from infra.targets.local.options import EndpointOptions
from infra.targets.local.release import read_manifest_abandonable
from infra.targets.local.upstream import UpstreamError, UpstreamPool
from infra.triton_runtime.external import ExternalTriton
from infra.triton_runtime.runtime import Runtime, TritonProcess
from packager.manifest import Manifest, ManifestModel
from packager.stores import Store, open_store
from tdk.errors import StoreError, TdkError

log = logging.getLogger("tdk.local")
#: what Triton 2.51's Python backend answers once a model instance's stub process has died
#: (measured 2026-11-27 with the runtime wheel: ``Stub process 'm_0_0' is not healthy.``)
_STUB_CRASHED = re.compile(r"Stub process '[^']*' is not healthy")


def stub_crashed(message: str) -> bool:
    """Whether Triton's error ``message`` says the model's Python stub process died."""
    return _STUB_CRASHED.search(message) is not None


#: what Triton 2.51 answers an inference for a model it does not hold (checked 2026-12-07 with
#: the runtime wheel: ``Request for unknown model: 'm' is not found``): a pod's Triton that
#: restarted between two of the front's health polls has forgotten every model
_FORGOTTEN = re.compile(r"Request for unknown model")


def forgotten(message: str) -> bool:
    """Whether Triton's error ``message`` says it does not hold the model (it restarted)."""
    return _FORGOTTEN.search(message) is not None


IDLE_GRACE = 0.2  # seconds without requests before a loaded model counts as idle


@dataclass
class ModelState:
    """One TargetModel's life on this endpoint."""

    entry: ManifestModel
    loaded: bool = False
    evicting: bool = False
    inflight: int = 0
    last_used: float = 0.0
    loaded_at: float = 0.0
    loading: asyncio.Future[None] | None = field(default=None, repr=False)
    #: why its last load failed (Triton's reason), until a load succeeds
    failed: str | None = None
    #: requests between ``acquire``'s lookup and their count in ``inflight``
    pending: int = 0
    #: left out of the release the endpoint switched to: unloaded once its requests finish
    retired: bool = False
    #: bytes it holds against the memory budget while loading or loaded (``budget``)
    memory: int = 0
    #: its last load: seconds fetching (0 when extracted already) and in Triton's load
    download_s: float = 0.0
    load_s: float = 0.0
    #: done once Triton reports its last unload finished (None: no unload since); a load of a
    #: model Triton still unloads waits for it (``_unload``)
    unloaded: asyncio.Future[None] | None = field(default=None, repr=False)


#: seconds Triton gets to exit on SIGTERM before it and its Python stubs are killed. The front
#: has drained every request by then and the repository is ours (removed next), so Triton's own
#: shutdown (1 s polls, each stub's finalize: 4-6 s with models loaded) buys nothing here.
STOP_GRACE_S = 0.3


class _OutOfMemory(Exception):
    """Triton's load failed for want of memory (``budget.out_of_memory``)."""


class ModelManager:
    """Owns the Triton it drives (a child it started, or the pod's: ``--triton-url``), the model
    repository on disk and the capacity slots, by count and by memory."""

    def __init__(self, settings: EndpointOptions, runtime: Runtime | None) -> None:
        self.settings = settings
        self.runtime = runtime
        self.metrics = Metrics()
        self.workdir = settings.workdir_path
        self.repository = self._repository_of(self.workdir)
        self.models: dict[str, ModelState] = {}
        self.slots: set[str] = set()  # TargetModels loading or loaded
        #: bytes of models unloaded whose unload Triton has not yet reported done
        self.unloading = 0
        #: the latest loads (TargetModel, download and Triton load ms): ``/tdk/status``
        self.loads: collections.deque[dict[str, object]] = collections.deque(maxlen=4096)
        self.disk = cache.DiskCache(self.repository, settings.cache_bytes)
        self.triton: TritonProcess | ExternalTriton = self._new_triton()
        self.pool = UpstreamPool("127.0.0.1", 0)
        self.ready = asyncio.Event()
        self.restarts = 0
        self._changed = asyncio.Event()
        self._waiting = 0
        self._stopping = False
        self._claimed = False
        self._workdir_lock: int | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.store: Store = open_store(settings.store_url, settings.store_endpoint_url)
        self.manifest: Manifest | None = None
        #: models of a release switched away from, until their requests finish (``switch``)
        self.retiring: list[ModelState] = []

    async def start(self) -> None:
        """Read the manifest, reset the repository, start Triton and watch it."""
        self.manifest = await read_manifest_abandonable(self.store)
        self.models = {m.target_model: ModelState(m) for m in self.manifest.models}
        self.metrics.known = frozenset(self.models)
        root = workdir.claim(self.workdir, adopt=not self.settings.workdir)
        self._workdir_lock = lock.hold(
            root / workdir.MARKER,
            f"a local endpoint in the work directory {root}",
            "give each endpoint its own --workdir",
        )
        self._claimed = True
        self.workdir = root
        self.repository = root / "repository"
        self.repository = self._repository_of(root)
        self.disk = cache.DiskCache(self.repository, self.settings.cache_bytes)
        workdir.remove(root, root / "staging")
        if self.settings.triton_url is None:
            workdir.remove(root, self.repository)
            self.repository.mkdir(parents=True)
            await self._start_triton()
        else:  # the pod's Triton: ready when it is (the watcher waits; /ping says 503 till then)
            workdir.clear_shared(self.repository)
        self._watcher = asyncio.create_task(self._watch())

    def _repository_of(self, root: Path) -> Path:
        """The models' directory: the work dir's own, or the pod's Triton's (``--model-dir``)."""
        if self.settings.model_dir is not None:
            return Path(self.settings.model_dir).expanduser().resolve()
        return root / "repository"

    def _new_triton(self) -> TritonProcess | ExternalTriton:
        if self.settings.triton_url is not None:
            return ExternalTriton(self.settings.triton_url)
        assert self.runtime is not None
        return TritonProcess(
            self.runtime, self.repository, self.workdir, netns=self.settings.triton_netns
        )

    async def _start_triton(self) -> None:
        self.triton = self._new_triton()
        await self.triton.start()
        self.pool.close()
        if isinstance(self.triton, ExternalTriton):
            self.pool = UpstreamPool(self.triton.host, self.triton.http_port)
            await self._unload_all()
        else:
            self.pool = UpstreamPool("127.0.0.1", self.triton.http_port, self.triton.open_socket)
        self.ready.set()

    async def _unload_all(self) -> None:
        """What the pod's Triton holds from before this front started (a restarted front)."""
        index = await self.pool.request("POST", "/v2/repository/index", b"{}")
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            for item in json.loads(index.body or b"[]"):
                if item.get("state") in ("READY", "LOADING"):
                    name = str(item.get("name"))
                    await self.pool.request("POST", f"/v2/repository/models/{name}/unload")

    async def stop(self) -> None:
        self._stopping = True
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        self.pool.close()
        await self.triton.stop(grace=STOP_GRACE_S)
        if self._claimed:  # the work dir is the endpoint's: its staging goes
            workdir.remove(self.workdir, self.workdir / "staging")
        if self._workdir_lock is not None:
            os.close(self._workdir_lock)
            self._workdir_lock = None

    async def _watch(self) -> None:
        """Triton died: forget what was loaded, restart it; models reload on demand."""
        if not self.ready.is_set():
            await self._restart()
        while not self._stopping:
            code = await self.triton.wait()
            if self._stopping:
                return
            self.ready.clear()
            log.error("Triton exited with code %s; restarting\n%s", code, self.triton.log_tail(5))
            await self.triton.stop()  # its stubs and shared memory go before a new one starts
            for state in self.models.values():
                state.loaded = False
                state.memory = 0
            self.slots.clear()
            self.unloading = 0
            self._notify()
            await self._restart()
            self.restarts += 1

    async def _restart(self) -> None:
        delay = 0.5
        while not self._stopping:
            try:
                await self._start_triton()
                return
            except (TdkError, OSError, UpstreamError) as exc:
                log.error("Triton (re)start failed: %s", exc)
                await asyncio.sleep(delay)  # a back-off between tries, not a synchronisation
                delay = min(delay * 2, 10.0)

    # -- requests ---------------------------------------------------------------------------

    def state_of(self, target_model: str) -> ModelState:
        """The TargetModel's state; ValidationError when it is not a name in the manifest."""
        state = self.models.get(target_model)
        if state is None:
            shown = target_model if len(target_model) < 200 else target_model[:200] + "…"
            raise validation(
                f"TargetModel {shown!r} is not in the release at {self.settings.store_url}"
            )
        return state

    async def acquire(self, target_model: str) -> ModelState:
        """Make sure the model is loaded and count one request in flight for it."""
        return (await self.acquire_hit(target_model))[0]

    async def acquire_hit(self, target_model: str) -> tuple[ModelState, bool]:
        """``acquire``, and whether the model was loaded already (SageMaker's ModelCacheHit)."""
        state = self.state_of(target_model)
        hit = state.loaded and not state.evicting and self.ready.is_set()
        self.metrics.cache_lookup(hit, target_model)
        if not hit:
            started = time.monotonic()
            state.pending += 1
            try:
                await self._ensure_loaded(state)
            finally:
                state.pending -= 1
                if state.retired:
                    self._notify()
            self.metrics.observe("ModelLoadingWaitTime", time.monotonic() - started, target_model)
        state.inflight += 1
        state.last_used = time.monotonic()
        return state, hit

    def reload_on_next_request(self, state: ModelState) -> None:
        """The model's Python stub crashed, or Triton forgot it (a pod's Triton restarted): count
        it unloaded and free its slot; the next request loads it again (Triton's load of a
        loaded model replaces its instances)."""
        if state.loaded:
            state.loaded = False
            self.slots.discard(state.entry.target_model)
            self.metrics.count("ModelUnloads", state.entry.target_model)
            log.warning(
                "%s: its Python stub crashed or Triton forgot it; reloading on the next request",
                state.entry.target_model,
            )
            self._notify()

    def release(self, state: ModelState) -> None:
        state.inflight -= 1
        if state.inflight == 0 and (self._waiting or state.retired):
            self._notify()

    async def _ensure_loaded(self, state: ModelState) -> None:
        while not (state.loaded and not state.evicting and self.ready.is_set()):
            if not self.ready.is_set():
                await self._wait_ready()
                continue
            if state.loading is None:
                state.loading = asyncio.ensure_future(self._load(state))
            await asyncio.shield(state.loading)

    async def _wait_ready(self) -> None:
        try:
            await asyncio.wait_for(self.ready.wait(), self.settings.capacity_timeout)
        except TimeoutError:
            raise unavailable("the local Triton runtime is restarting; retry shortly") from None

    # -- loading ----------------------------------------------------------------------------

    async def _load(self, state: ModelState) -> None:
        target = state.entry.target_model
        try:
            while state.evicting or self._superseded(state):
                await self._wait_change(time.monotonic() + self.settings.capacity_timeout)
            if state.loaded:
                return
            await self._reserve_slot(state)
            state.download_s = 0.0
            try:
                if not self.disk.has(state.entry):
                    await self._install(state)
                if state.unloaded is not None:  # Triton's unload of it first (``_unload``)
                    await asyncio.shield(state.unloaded)
                await self._load_or_evict(state)
            except BaseException:
                self.slots.discard(target)
                state.memory = 0
                self._notify()
                raise
            state.loaded = True
            state.failed = None
            state.loaded_at = time.monotonic()
            self.loads.append(
                {
                    "target_model": target,
                    "download_ms": round(state.download_s * 1000, 3),
                    "load_ms": round(state.load_s * 1000, 3),
                }
            )
        finally:
            state.loading = None

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
        state.download_s = result.download_s
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

    async def _triton_load(self, state: ModelState) -> None:
        name = state.entry.name
        started = time.monotonic()
        try:
            response = await self.pool.request(
                "POST", f"/v2/repository/models/{name}/load", headers=self.triton.repository_headers
            )
        except UpstreamError as exc:
            raise unavailable(
                f"the local Triton runtime failed while loading {name}: {exc}"
            ) from exc
        if response.status != 200:
            message = triton_error_text(response.body)
            if budget.out_of_memory(message):
                raise _OutOfMemory(message)
            self.disk.drop(state.entry)
            raise model_error(
                self._load_failed(
                    state, f"Triton could not load {state.entry.target_model}: {message}"
                ),
                original_status=response.status,
                original_message=message,
            )
        self.triton.protect_memory()
        state.load_s = time.monotonic() - started
        self.metrics.observe("ModelLoadingTime", state.load_s, state.entry.target_model)
        if self.settings.memory_budget:
            stats = await self.pool.request("GET", f"/v2/models/{name}/stats")
            used = budget.reported(stats.body) if stats.status == 200 else 0
            state.memory = used or state.memory

    def _load_failed(self, state: ModelState, message: str) -> str:
        """Count a failed load and keep its reason for ``endpoint status``; the message."""
        self.metrics.count("ModelLoadFailures", state.entry.target_model)
        state.failed = message
        return message

    # -- capacity ---------------------------------------------------------------------------

    async def _reserve_slot(self, state: ModelState) -> None:
        """A slot, and the model's memory within the budget: the least recently used idle model
        goes first; memory counts free once Triton reports the unload done."""
        deadline = time.monotonic() + self.settings.capacity_timeout
        need = budget.estimate(state.entry)
        limit = self.settings.memory_budget
        if limit and need > limit:
            raise insufficient_memory(
                self._load_failed(
                    state,
                    f"{state.entry.target_model} needs about {need} bytes, more than the "
                    f"{limit}-byte memory budget (--memory-budget-bytes)",
                )
            )
        while len(self.slots) >= self.settings.max_loaded or (
            limit and self.memory_used() + need > limit
        ):
            now = time.monotonic()
            if len(self.slots) < self.settings.max_loaded and self._fits_once_unloaded(need):
                await self._wait_change(deadline)  # an unload under way frees enough
                continue
            victim = self._victim(now)
            if victim is not None:
                await self._evict(victim, deadline)
            else:
                await self._wait_change(deadline, wake=self._next_expiry(now))
        self.slots.add(state.entry.target_model)
        state.memory = need

    def _fits_once_unloaded(self, need: int) -> bool:
        """Whether the unloads Triton is finishing free enough for ``need`` bytes."""
        return self.unloading > 0 and self.memory_used() - self.unloading + need <= (
            self.settings.memory_budget
        )

    def memory_used(self) -> int:
        """Bytes held by models loading or loaded, and by unloads Triton has not finished."""
        held = sum(self.models[t].memory for t in self.slots if t in self.models)
        return held + self.unloading

    def _resident(self) -> list[ModelState]:
        return [
            s
            for s in self.models.values()
            if s.loaded and not s.evicting and s.entry.target_model in self.slots
        ]

    def _victim(self, now: float, idle_only: bool = False) -> ModelState | None:
        """The model to unload next: the least recently used one that is idle (nothing in flight
        for ``IDLE_GRACE`` s); else the one loaded longest ago once it has been resident
        ``min_residency`` s, so that swaps under contention cannot thrash."""
        resident = self._resident()
        idle = [s for s in resident if s.inflight == 0 and now - s.last_used >= IDLE_GRACE]
        if idle or idle_only:
            return min(idle, key=lambda s: s.last_used, default=None)
        ripe = [s for s in resident if now - s.loaded_at >= self.settings.min_residency]
        return min(ripe, key=lambda s: s.loaded_at, default=None)

    def _next_expiry(self, now: float) -> float | None:
        resident = self._resident()
        expiries = [s.loaded_at + self.settings.min_residency for s in resident]
        expiries += [s.last_used + IDLE_GRACE for s in resident if s.inflight == 0]
        return min(expiries, default=None)

    async def _evict(self, victim: ModelState, deadline: float) -> None:
        """Drain ``victim`` (new requests for it wait), then unload it."""
        victim.evicting = True
        self.metrics.count("ModelEvictions", victim.entry.target_model)
        try:
            while victim.inflight > 0:
                await self._wait_change(deadline)
            await self._unload(victim)
        finally:
            victim.evicting = False
            self._notify()

    async def _wait_change(self, deadline: float, wake: float | None = None) -> None:
        """Wait for a slot or in-flight count to change, until ``wake`` at the latest."""
        now = time.monotonic()
        remaining = deadline - now
        if remaining <= 0:
            raise not_ready(
                f"all {self.settings.max_loaded} loaded models are busy; no capacity to load "
                "another within the capacity timeout"
            )
        if wake is not None:
            remaining = max(0.001, min(remaining, wake - now))
        event = self._changed
        self._waiting += 1
        try:
            await asyncio.wait_for(event.wait(), remaining)
        except TimeoutError:
            pass
        finally:
            self._waiting -= 1

    def _superseded(self, state: ModelState) -> bool:
        """Whether a model of the release switched away from still holds this one's name."""
        names = {state.entry.target_model, state.entry.name}
        return any({old.entry.target_model, old.entry.name} & names for old in self.retiring)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _unload(self, victim: ModelState) -> None:
        """Unload the served model, then composing models no other loaded model uses. Triton
        answers at once and finishes in the background (a Python stub's finalize takes seconds);
        ``victim.unloaded`` is done once it reports the unload finished: a load of the model
        asked for meanwhile waits for it, so that the unload under way is never mistaken for
        one of the new load (Triton's index says READY again) nor a load sent into it."""
        started = time.monotonic()
        finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        victim.unloaded = finished
        victim.loaded = False
        target = victim.entry.target_model
        self.slots.discard(target)
        freed, victim.memory = victim.memory, 0
        self.unloading += freed
        in_use = {
            name
            for other in self.models.values()
            if other is not victim and other.entry.target_model in self.slots
            for name in cache.model_dirs(other.entry)
        }
        names = [victim.entry.name]
        names += [n for n in reversed(cache.model_dirs(victim.entry)) if n not in in_use]
        try:
            for name in dict.fromkeys(names):
                await self.pool.request(
                    "POST",
                    f"/v2/repository/models/{name}/unload",
                    headers=self.triton.repository_headers,
                )
        except UpstreamError as exc:  # Triton died (the watcher resets everything), or not:
            log.warning("%s: Triton did not answer its unload (%s)", target, exc)
        else:
            self.metrics.count("ModelUnloads", target)
        # Triton finishes the unload (the Python stub exits) in the background; the slot is
        # free now, its memory once Triton reports it gone (ModelUnloadingTime).
        task = asyncio.create_task(
            self._wait_unloaded(set(names), started, freed, target, finished)
        )
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _wait_unloaded(
        self,
        names: set[str],
        started: float,
        freed: int,
        target: str,
        finished: asyncio.Future[None],
        timeout: float = 30.0,
    ) -> None:
        """Poll Triton's index until ``names`` are unavailable; then ``freed`` bytes count free
        (after ``timeout`` too, logged: a budget must not stay taken by a lost answer)."""
        deadline = time.monotonic() + timeout
        try:
            with contextlib.suppress(UpstreamError, ValueError):
                while time.monotonic() < deadline:
                    response = await self.pool.request(
                        "POST",
                        "/v2/repository/index",
                        b"{}",
                        headers=self.triton.repository_headers,
                    )
                    busy = [
                        item
                        for item in json.loads(response.body or b"[]")
                        if item.get("name") in names and item.get("state") in ("READY", "UNLOADING")
                    ]
                    if not busy:
                        elapsed = time.monotonic() - started
                        self.metrics.observe("ModelUnloadingTime", elapsed, target)
                        return
                    await asyncio.sleep(0.02)  # Triton has no unload event to wait on: a poll
            log.warning("%s: Triton did not report its unload done in %.0f s", target, timeout)
        finally:
            self.unloading = max(0, self.unloading - freed)
            if not finished.done():
                finished.set_result(None)
            self._notify()

    # -- reporting --------------------------------------------------------------------------

    def loaded_count(self) -> int:
        return sum(1 for s in self.models.values() if s.loaded)

    def loaded_models(self) -> list[str]:
        return [target for target, s in self.models.items() if s.loaded]

    def status(self) -> dict[str, object]:
        """What ``tdk local status`` shows."""
        return {
            "name": self.settings.name,
            "release": self.settings.store_url,
            "max_loaded_models": self.settings.max_loaded,
            "memory_budget_bytes": self.settings.memory_budget,
            "memory_used_bytes": self.memory_used(),
            "triton_pid": self.triton.pid,
            "triton_restarts": self.restarts,
            "models": len(self.models),
            "loaded": [
                s.entry.target_model
                for s in sorted(self.models.values(), key=lambda s: -s.last_used)
                if s.loaded
            ],
            "failed": {s.entry.target_model: s.failed for s in self.models.values() if s.failed},
            "recent_loads": list(self.loads),
            "metrics": self.metrics.snapshot(self.loaded_count()),
        }


__all__ = ["ApiError", "ModelManager", "ModelState"]
