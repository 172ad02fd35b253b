"""One local Triton (the kit's runtime) holding one model whose config tune rewrites and reloads.
It may be pinned to some CPUs (``infra.perf.bench.placement``), its backend stubs with it.

It is isolated as the local endpoint's (``--triton-netns auto``): where the kernel allows, its
listeners are in a network namespace of its own, and the load generator's processes reach it
through its launcher's connector (``opener``: a TCP connection made inside the namespace is
handed over once per keep-alive connection; requests then go straight to Triton, so the
figures are not a relay's). Where namespaces are refused, it says so once, naming what that
exposes.

The model directory is copied into a private repository and adapted for the local runtime
(``adapt_model_dir``: ONNX on the Python backend, CPU instances), so the user's files are
never touched. Every start is paired with a stop: ``with LocalTriton(...)`` always stops it.
"""

from __future__ import annotations

import asyncio
import http.client
import itertools
import json
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from infra.perf.tune.accel import Capabilities
from packager.config import CONFIG_NAME, dump_config, load_config
from packager.manifest import ManifestModel
from tdk.errors import EndpointError

if TYPE_CHECKING:
    from infra.clients.triton_http import Opener

LOAD_TIMEOUT_S = 300.0
#: tune's Triton is isolated as ``tdk local up``'s (``--triton-netns auto``); "off" puts its
#: listeners on this machine's 127.0.0.1, for a test that calls it as a remote Triton
NETNS = "auto"


class LocalTriton:
    """Triton serving ``model_dir`` (copied under ``workdir``) in explicit mode, reached only
    through ``opener``."""

    def __init__(
        self,
        model_dir: Path,
        workdir: Path,
        cpus: frozenset[int] | None = None,
        netns: str = NETNS,
    ) -> None:
        from infra.triton_runtime.adapter import LOCAL_BACKENDS, adapt_model_dir
        from infra.triton_runtime.runtime import TritonProcess, find_runtime

        self.workdir = workdir
        self.repository = workdir / "repository"
        self.name = load_config(model_dir / CONFIG_NAME).name or model_dir.name
        self.model_dir = self.repository / self.name
        shutil.copytree(model_dir, self.model_dir, symlinks=False)
        adapt_model_dir(self.model_dir)
        #: the config as the local runtime serves it (backend adapted); knobs are applied to it
        self.base_config = load_config(self.model_dir / CONFIG_NAME)
        #: the local runtime runs on this machine's CPUs (``cpus``, when it is pinned to them),
        #: with the backends it carries
        count = len(cpus) if cpus else os.cpu_count() or 1
        self.capabilities = Capabilities(False, frozenset(LOCAL_BACKENDS), count)
        #: the local runtime serves on CPUs: no GPU figures to read after a window
        self.metrics: Callable[[], dict[str, float]] | None = None
        self._loop = asyncio.new_event_loop()
        self._triton = TritonProcess(
            find_runtime(), self.repository, workdir / "triton", cpus=cpus, netns=netns,
            connector=True,
        )  # fmt: skip

    @property
    def url(self) -> str:
        """The URL requests name (their Host); connections come from ``opener``."""
        return self._triton.http_url

    @property
    def opener(self) -> Opener:
        """A connection to Triton for any process of this user (picklable)."""
        return self._triton.connector_of()

    @property
    def pid(self) -> int | None:
        return self._triton.pid

    @property
    def repository_headers(self) -> dict[str, str]:
        """What a call to this Triton's restricted APIs (model config, repository) sends."""
        return dict(self._triton.repository_headers)

    def __enter__(self) -> LocalTriton:
        try:
            self._loop.run_until_complete(self._triton.start())
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop Triton (SIGTERM, then SIGKILL) and close the private event loop."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._triton.stop(grace=10.0))
        finally:
            self._loop.close()

    def load(self, config: Any) -> None:
        """Write ``config`` into the private repository and (re)load the model with it."""
        from infra.clients.triton_http import OpenedConnection

        (self.model_dir / CONFIG_NAME).write_text(dump_config(config), encoding="utf-8")
        port = self._triton.http_port
        conn = OpenedConnection("127.0.0.1", port, LOAD_TIMEOUT_S, self.opener)
        try:
            path = f"/v2/repository/models/{self.name}/load"
            conn.request("POST", path, body=b"{}", headers=self.repository_headers)
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise EndpointError(
                f"the local Triton failed while loading {self.name}: {exc}",
                hint=f"see {self._triton.log_path}",
            ) from exc
        finally:
            conn.close()
        if response.status != 200:
            raise EndpointError(
                f"Triton could not load {self.name} with the tried config: {_error(body)}",
                hint=f"see {self._triton.log_path}",
            )


def _error(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body[:300].decode("utf-8", "replace")


class PerThreadSender:
    """A ``send()`` for the load generator: each thread gets its own keep-alive client (its
    connection from ``opener`` where given)."""

    def __init__(
        self,
        url: str,
        model: ManifestModel,
        arrays: dict[str, Any] | list[dict[str, Any]],
        opener: Opener | None = None,
    ) -> None:
        from infra.clients.triton_http import TritonHttpTarget

        self._make: Callable[[], TritonHttpTarget] = lambda: TritonHttpTarget(url, opener=opener)
        self._local = threading.local()
        self._clients: list[TritonHttpTarget] = []
        self._lock = threading.Lock()
        self.model = model
        requests = [arrays] if isinstance(arrays, dict) else arrays  # a list: sent in turn
        preparer = self._make()
        self._requests = [preparer.prepare(model, one) for one in requests]
        preparer.close()
        self.request = self._requests[0]
        self._turns = itertools.cycle(self._requests)

    def __call__(self) -> object:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._make()
            with self._lock:
                self._clients.append(client)
        request = self.request
        if len(self._requests) > 1:
            with self._lock:
                request = next(self._turns)
        # decoded, not just sent: a 200 whose outputs do not decode is an error, not throughput
        return client.decode(self.model, client.send(self.model, request))

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()


@dataclass(frozen=True)
class SenderFactory:
    """Builds a :class:`PerThreadSender` inside a load-generator process (picklable)."""

    url: str
    model: ManifestModel
    arrays: dict[str, Any] | list[dict[str, Any]]
    opener: Opener | None = None

    def __call__(self) -> PerThreadSender:
        return PerThreadSender(self.url, self.model, self.arrays, self.opener)
