"""Capacity of a local endpoint: slots by count and by memory, the choice of a model to evict,
its drain and its unload (never while a request for it is in flight)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import math
import time
from pathlib import Path

from infra.targets.local import alias, budget, cache
from infra.targets.local.errors import ApiError, insufficient_memory, not_ready
from infra.targets.local.metrics import Metrics
from infra.targets.local.model_state import IDLE_GRACE, ModelState
from infra.targets.local.options import EndpointOptions
from infra.targets.local.upstream import UpstreamError, UpstreamPool
from infra.triton_runtime.external import ExternalTriton
from infra.triton_runtime.runtime import TritonProcess

log = logging.getLogger("tdk.local")

#: seconds of cold loads the headroom's arrival rate is counted over
ARRIVAL_WINDOW_S = 10.0
#: weight of the newest unload in the average unload time the headroom is sized with
UNLOAD_WEIGHT = 0.3


def wanted_headroom(floor: int, most: int, arrivals_per_s: float, unload_s: float) -> int:
    """Models' room to keep free so that a cold request need not wait for an unload: the cold
    loads expected while one unload finishes (Little's law: rate x time), plus two standard
    deviations of that count were arrivals Poisson, at least ``floor`` and at most ``most``
    (``most <= floor``: a fixed ``floor``)."""
    if most <= floor:
        return floor
    expected = max(0.0, arrivals_per_s) * max(0.0, unload_s)
    return max(floor, min(most, math.ceil(expected + 2 * math.sqrt(expected))))


class Capacity:
    """The model manager's slots and evictions (``ModelManager`` sets the state it reads)."""

    settings: EndpointOptions
    metrics: Metrics
    models: dict[str, ModelState]
    slots: set[str]
    unloading: int
    pool: UpstreamPool
    triton: TritonProcess | ExternalTriton
    retiring: list[ModelState]
    _changed: asyncio.Event
    _waiting: int
    _background: set[asyncio.Task[None]]
    #: bytes the next load is expected to need (the last load's), kept free ahead of it
    _headroom: int
    _headroom_task: asyncio.Task[None] | None
    #: when the last cold loads took their room (``_keep_headroom``), for the rate they come at
    _arrivals: collections.deque[float]
    #: seconds Triton took to finish the last unloads (a weighted average; 0: none seen yet)
    _unload_s: float
    #: bytes promised to requests that wait for an unload under way (``_reserve_slot``)
    _promised: int
    repository: Path

    def _load_failed(self, state: ModelState, message: str) -> str:
        """Count a failed load and keep its reason for ``endpoint status``; the message."""
        self.metrics.count("ModelLoadFailures", state.entry.target_model)
        state.failed = message
        return message

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
                # an unload under way frees enough, beyond what it is already promised to: a
                # second cold request starts an unload of its own instead of queueing behind
                self._promised += need
                try:
                    await self._wait_change(deadline)
                finally:
                    self._promised -= need
                continue
            victim = self._victim(now)
            if victim is not None:
                await self._evict(victim, deadline)
            else:
                await self._wait_change(deadline, wake=self._next_expiry(now))
        self.slots.add(state.entry.target_model)
        state.memory = need

    def _keep_headroom(self, state: ModelState) -> None:
        """Once loads leave less than ``headroom_models`` models like ``state`` free (slots and
        memory), unload the least recently used idle models in the background, so that the next
        cold request finds room instead of waiting for Triton to finish an unload (a Python
        stub's exit takes seconds). Only idle models go: never one with a request in flight."""
        self._headroom = budget.estimate(state.entry)
        now = time.monotonic()
        self._arrivals.append(now)
        while self._arrivals and self._arrivals[0] < now - ARRIVAL_WINDOW_S:
            self._arrivals.popleft()
        if self._headroom_task is None and self._short_of_headroom():
            task = asyncio.create_task(self._make_headroom())
            self._headroom_task = task
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def _short_of_headroom(self) -> bool:
        """Whether the next loads of ``_headroom`` bytes each would have to wait for an eviction
        (an unload Triton is finishing counts as room: it was started for that). No headroom
        where it would leave room for less than one loaded model."""
        keep, need = self.settings.headroom_models, self._headroom
        most, limit = self.settings.max_loaded, self.settings.memory_budget
        if keep == 0 or most <= keep or (limit and limit < (keep + 1) * need):
            return False
        keep = self.headroom_models()
        used = self.memory_used() - self.unloading + self._promised
        return len(self.slots) + keep > most or bool(limit and used + keep * need > limit)

    def headroom_models(self) -> int:
        """The room kept free now, in models: ``--headroom-models``, or up to
        ``--headroom-max-models`` the cold loads expected during one unload; never so much
        that less than one model like the last one loaded would fit."""
        since = time.monotonic() - ARRIVAL_WINDOW_S  # what came before: the rate of another time
        rate = sum(1 for at in self._arrivals if at >= since) / ARRIVAL_WINDOW_S
        floor, most = self.settings.headroom_models, self.settings.headroom_max
        if not floor:
            return 0
        keep = min(wanted_headroom(floor, most, rate, self._unload_s), self.settings.max_loaded - 1)
        limit, need = self.settings.memory_budget, self._headroom
        return min(keep, limit // need - 1) if limit and need else keep

    async def _make_headroom(self) -> None:
        try:
            while self._short_of_headroom():
                now = time.monotonic()
                deadline = now + self.settings.capacity_timeout
                victim = self._victim(now, idle_only=True)
                if victim is None:  # every loaded model busy: until one is idle
                    await self._wait_change(deadline, wake=self._next_expiry(now))
                else:
                    await self._evict(victim, deadline)
        except ApiError as exc:  # nothing idle within the capacity timeout: the next load asks
            log.info("no idle model to unload ahead of the next load: %s", exc.message)
        finally:
            self._headroom_task = None

    def _fits_once_unloaded(self, need: int) -> bool:
        """Whether the unloads Triton is finishing free enough for ``need`` bytes."""
        held = self.memory_used() - self.unloading + self._promised
        return self.unloading > 0 and held + need <= self.settings.memory_budget

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
        # a request waiting for the model's load (``pending``) counts as in flight: a model just
        # loaded has not been used yet (last_used 0), and evicting it before that request runs
        # would unload it unused and load it again
        idle = [s for s in resident if not (s.inflight or s.pending)]
        idle = [s for s in idle if now - s.last_used >= IDLE_GRACE]
        if idle or idle_only:
            return min(idle, key=lambda s: s.last_used, default=None)
        ripe = [s for s in resident if now - s.loaded_at >= self.settings.min_residency]
        return min(ripe, key=lambda s: s.loaded_at, default=None)

    def _next_expiry(self, now: float) -> float | None:
        resident = self._resident()
        expiries = [s.loaded_at + self.settings.min_residency for s in resident]
        expiries += [s.last_used + IDLE_GRACE for s in resident if not (s.inflight or s.pending)]
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

    def _unaliased(self, state: ModelState, names: set[str]) -> None:
        """Triton has finished unloading ``state`` under ``names``: an alias among them loses its
        directory, and the model's next load goes under its own name again."""
        for name in names:
            if name != alias.alias_of(state.entry) or state.unloads.get(name) is None:
                continue
            if state.triton_name == name and (state.loaded or state.loading is not None):
                continue  # loaded under it again (a Triton restarted meanwhile)
            alias.remove(self.repository, name)
            if state.triton_name == name:
                state.triton_name = state.entry.name

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
        ``victim.unloads[name]`` is done once it reports the unload finished: a load of the
        model asked for meanwhile goes under its other name (``alias``) or waits for it, so that
        the unload under way is never mistaken for one of the new load (Triton's index says
        READY again) nor a load sent into it."""
        started = time.monotonic()
        finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        served = victim.triton_name
        victim.unloads[served] = finished
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
        names = [served]  # then its composing models (the served one's own name: ``served``)
        steps = reversed(cache.model_dirs(victim.entry))
        names += [n for n in steps if n not in in_use and n != victim.entry.name]
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
            self._wait_unloaded(set(names), started, freed, victim, finished)
        )
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _wait_unloaded(
        self,
        names: set[str],
        started: float,
        freed: int,
        victim: ModelState,
        finished: asyncio.Future[None],
        timeout: float = 30.0,
    ) -> None:
        """Poll Triton's index until ``names`` are unavailable; then ``freed`` bytes count free
        (after ``timeout`` too, logged: a budget must not stay taken by a lost answer), and an
        alias's directory goes."""
        target = victim.entry.target_model
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
                        last = self._unload_s or elapsed
                        self._unload_s = last + UNLOAD_WEIGHT * (elapsed - last)
                        return
                    await asyncio.sleep(0.02)  # Triton has no unload event to wait on: a poll
            log.warning("%s: Triton did not report its unload done in %.0f s", target, timeout)
        finally:
            self.unloading = max(0, self.unloading - freed)
            self._unaliased(victim, names)
            if not finished.done():
                finished.set_result(None)
            self._notify()
