"""A Triton stand-in the test controls: the model-repository and health API over HTTP/1.1, with
each unload held UNLOADING until the test finishes it (a real Triton's Python stub takes seconds
to finalize, at a moment no test chooses)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.targets.local.manager import ModelManager
from infra.targets.local.options import EndpointOptions

_LOAD, _UNLOAD = "/load", "/unload"
_REPOSITORY = "/v2/repository/models/"


@dataclass
class Request:
    """One request as the stand-in received it: ``(method, path)``, the connection it came on,
    the state of the model it names at that moment (None: not a repository request), and how
    many models Triton held then."""

    path: str
    connection: int
    state: str | None
    #: models Triton held (READY or UNLOADING) when it came
    held: int = 0


@dataclass
class TritonStandIn:
    """Serves ``/v2/health/*``, ``/v2/repository/index``, ``.../load`` and ``.../unload``."""

    states: dict[str, str] = field(default_factory=dict)
    received: list[Request] = field(default_factory=list)
    #: names whose loads fail (Triton's 400 and its error), the state left as it was
    refused: set[str] = field(default_factory=set)
    port: int = 0
    _server: asyncio.Server | None = None
    _connections: int = 0
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    def finish_unload(self, name: str) -> None:
        """Triton reports the unload of ``name`` done (its index says UNAVAILABLE)."""
        assert self.states.get(name) == "UNLOADING", (
            f"loaded before its unload finished: {self.states}"
        )
        self.states[name] = "UNAVAILABLE"

    async def wait_for(self, path: str | None, after: int = 0, connection: int = 0) -> int:
        """Where in ``received`` the first request at index ``after`` or later is that is for
        ``path`` (None: any) and came on ``connection`` (0: any)."""
        while True:
            for at in range(after, len(self.received)):
                request = self.received[at]
                if path in (None, request.path) and connection in (0, request.connection):
                    return at
            self._arrived.clear()
            await self._arrived.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections += 1
        connection = self._connections
        try:
            while True:
                raw = await reader.readuntil(b"\r\n\r\n")
                request_lines = raw.decode("latin-1").split("\r\n")
                method, path, _ = request_lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in request_lines[1:] if line)
                }
                await reader.readexactly(int(headers.get("content-length", "0")))
                status, body = self._answer(method, path, connection)
                close = headers.get("connection", "").lower() == "close"
                lines = [f"HTTP/1.1 {status} X", "Content-Type: application/json"]
                lines += [f"Content-Length: {len(body)}", *(["Connection: close"] * close)]
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def _answer(self, method: str, path: str, connection: int) -> tuple[int, bytes]:
        name = None
        if path.startswith(_REPOSITORY) and path.endswith((_LOAD, _UNLOAD)):
            name = path[len(_REPOSITORY) :].rsplit("/", 1)[0]
        held = sum(1 for state in self.states.values() if state in ("READY", "UNLOADING"))
        state = None if name is None else self.states.get(name)
        request = Request(path, connection, state, held)
        self.received.append(request)
        self._arrived.set()
        if path.startswith("/v2/health/"):
            return 200, b""
        if path == "/v2/repository/index":
            index = [{"name": n, "version": "1", "state": s} for n, s in self.states.items()]
            return 200, json.dumps(index).encode()
        if name is not None and path.endswith(_LOAD) and name in self.refused:
            return 400, json.dumps({"error": f"failed to load '{name}'"}).encode()
        if name is not None and path.endswith(_LOAD):
            self.states[name] = "READY"
            return 200, b""
        if name is not None:
            self.states[name] = "UNLOADING"
            return 200, b""
        return 404, json.dumps({"error": f"the stand-in does not serve {method} {path}"}).encode()


@contextlib.asynccontextmanager
async def managed(
    release: Path, tmp_path: Path, **options: Any
) -> AsyncIterator[tuple[ModelManager, TritonStandIn]]:
    """A model manager of ``release`` (``options``: ``EndpointOptions`` fields) in front of a
    stand-in, ready; both stopped at the end whatever happened."""
    triton = TritonStandIn()
    await triton.start()
    manager: ModelManager | None = None
    try:
        manager = ModelManager(
            EndpointOptions(
                release=str(release),
                triton_url=triton.url,
                model_dir=str(tmp_path / "models"),
                workdir=str(tmp_path / "work"),
                **options,
            ),
            None,
        )
        await manager.start()
        await manager.ready.wait()
        yield manager, triton
    finally:
        if manager is not None:
            await manager.stop()
        await triton.stop()
