"""What SageMaker MME does for Triton: load on first request, single-flight, LRU, restart.

All state lives on the front's event loop (no locks): a model is ``loaded`` in Triton or not,
holds a capacity slot while loading or loaded, and counts requests in flight. Once a load fills
the last of ``max_loaded`` slots (or of the memory budget) the least recently used idle model is
unloaded in the background, so the next cold request need not wait for Triton's unload; when a
load finds no room and every loaded model is busy, the one loaded longest ago is drained (new
requests for it wait) once it has been resident ``min_residency`` seconds, then unloaded — never
while a request for it is in flight.

This module starts, watches and restarts Triton and takes the requests; ``loading`` loads a
model, ``capacity`` finds it a slot and evicts, ``model_state`` holds each model's state.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import time
from pathlib import Path

from infra.targets.local import alias, cache, lock, workdir
from infra.targets.local.errors import ApiError, unavailable, validation
from infra.targets.local.loading import Loading
from infra.targets.local.metrics import Metrics
from infra.targets.local.model_state import ModelState, forgotten, stub_crashed
from infra.targets.local.options import EndpointOptions
from infra.targets.local.release import read_manifest_abandonable
from infra.targets.local.upstream import UpstreamError, UpstreamPool
from infra.triton_runtime.external import ExternalTriton
from infra.triton_runtime.grpc_control import GrpcControl
from infra.triton_runtime.runtime import Runtime, TritonProcess
from packager.manifest import Manifest
from packager.stores import Store, open_store
from tdk.errors import TdkError

log = logging.getLogger("tdk.local")

#: seconds Triton gets to exit on SIGTERM before it and its Python stubs are killed. The front
#: has drained every request by then and the repository is ours (removed next), so Triton's own
#: shutdown (1 s polls, each stub's finalize: 4-6 s with models loaded) buys nothing here.
STOP_GRACE_S = 0.3


class ModelManager(Loading):
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
        #: loads over Triton's gRPC listener where the front reaches it (``grpc_control``)
        self.control: GrpcControl | None = None
        self.ready = asyncio.Event()
        self.restarts = 0
        self._changed = asyncio.Event()
        self._waiting = 0
        self._stopping = False
        self._claimed = False
        self._workdir_lock: int | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._headroom = 0
        self._headroom_task: asyncio.Task[None] | None = None
        self._arrivals: collections.deque[float] = collections.deque()
        self._unload_s = 0.0
        self._promised = 0
        self.store: Store = open_store(settings.release, settings.store_endpoint_url)
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
            return ExternalTriton(self.settings.triton_url, self.settings.triton_grpc)
        assert self.runtime is not None
        return TritonProcess(
            self.runtime, self.repository, self.workdir, netns=self.settings.triton_netns
        )

    async def _start_triton(self) -> None:
        self._close_control()  # the last Triton's channel, before a new one is started
        self.triton = self._new_triton()
        await self.triton.start()
        self.pool.close()
        await self._open_control()
        if isinstance(self.triton, ExternalTriton):
            self.pool = UpstreamPool(self.triton.host, self.triton.http_port)
            await self._unload_all()
        else:
            self.pool = UpstreamPool("127.0.0.1", self.triton.http_port, self.triton.open_socket)
        self.ready.set()

    async def _open_control(self) -> None:
        """Loads over Triton's gRPC listener once it answers as Triton's (``grpc_control``);
        else over HTTP, said once per start (a wrong ``--triton-grpc`` must not fail every
        load as if Triton were down)."""
        address = self.triton.grpc_address
        if address is None:
            return
        control = GrpcControl(address, self.triton.repository_headers)
        if await control.live():
            self.control = control
            return
        control.close()
        flag = "--triton-grpc " if isinstance(self.triton, ExternalTriton) else ""
        log.error(
            "%s%s does not answer as Triton's gRPC listener: models load over HTTP, where each "
            "load holds one of Triton's HTTP threads and the requests on it (pass Triton's "
            "--grpc-port)",
            flag,
            address,
        )

    def _close_control(self) -> None:
        if self.control is not None:
            self.control.close()
            self.control = None

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
        if self._headroom_task is not None:
            self._headroom_task.cancel()
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        self.pool.close()
        self._close_control()
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
                state.unloads.clear()  # the new Triton holds nothing, under no name
                if state.aliased:
                    alias.remove(self.repository, state.triton_name)
                    state.triton_name = state.entry.name
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
                f"TargetModel {shown!r} is not in the release at {self.settings.release}"
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

    # -- reporting --------------------------------------------------------------------------

    def loaded_count(self) -> int:
        return sum(1 for s in self.models.values() if s.loaded)

    def loaded_models(self) -> list[str]:
        return [target for target, s in self.models.items() if s.loaded]

    def status(self) -> dict[str, object]:
        """What ``tdk local status`` shows."""
        return {
            "name": self.settings.name,
            "release": self.settings.release,
            "max_loaded_models": self.settings.max_loaded,
            "memory_budget_bytes": self.settings.memory_budget,
            "memory_used_bytes": self.memory_used(),
            "headroom_models": self.headroom_models(),
            "triton_pid": self.triton.pid,
            "triton_restarts": self.restarts,
            # how loads reach Triton: "grpc" (``grpc_control``), or "http" where the front
            # cannot reach its gRPC listener (loads then hold one of Triton's HTTP threads)
            "triton_loads": "grpc" if self.control is not None else "http",
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


__all__ = ["ApiError", "ModelManager", "ModelState", "forgotten", "stub_crashed"]
