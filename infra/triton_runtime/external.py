"""A Triton that someone else runs (the second container of a pod): the front only talks to it.

``ExternalTriton`` has the shape of ``TritonProcess`` where the model manager uses it (start,
wait, stop, open_socket, repository headers), so one manager drives a Triton it started
(``tdk local``) or this one (``tdk front serve``). "Start" waits until Triton's ready endpoint
answers; "wait" returns once Triton stops answering its live endpoint (a restarted container
has forgotten its models: the manager then counts them unloaded). Stopping never touches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from urllib.parse import urlsplit

from infra.triton_runtime.runtime import http_ok
from tdk.errors import UsageError

#: seconds between health polls, and failed polls in a row that mean Triton is gone
POLL_S = 1.0
FAILURES = 3


def parse_url(url: str) -> tuple[str, int]:
    """(host, port) of an ``http://HOST:PORT`` Triton URL; UsageError naming the flag else."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise UsageError(
            f"--triton-url {url!r} is not http://HOST:PORT",
            hint="e.g. --triton-url http://127.0.0.1:8000 (Triton's HTTP port in the pod)",
        )
    return parts.hostname, port


class ExternalTriton:
    """Triton's HTTP endpoint at ``url``, run by someone else (never started or stopped here)."""

    owned = False
    pid: int | None = None
    repository_headers: tuple[tuple[str, str], ...] = ()

    def __init__(self, url: str, grpc_address: str | None = None) -> None:
        self.url = url
        self.host, self.http_port = parse_url(url)
        #: Triton's gRPC listener (``host:port``), where the front sends loads; None: over HTTP
        self.grpc_address = grpc_address
        self._stopped = asyncio.Event()

    def protect_memory(self) -> None:
        """Nothing to do: its shared memory is in its own container."""

    async def open_socket(self) -> socket.socket:
        """A connected, non-blocking socket to Triton's HTTP listener."""
        infos = await asyncio.get_running_loop().getaddrinfo(
            self.host, self.http_port, type=socket.SOCK_STREAM
        )
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, address)
        except BaseException:
            sock.close()
            raise
        return sock

    async def healthy(self, path: str = "/v2/health/ready") -> bool:
        """Whether Triton answers 200 on ``path`` within two seconds."""
        return await http_ok(self.open_socket, path)

    async def start(self, timeout: float | None = None) -> None:
        """Wait until Triton is ready (``timeout`` None: as long as it takes; TimeoutError)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not await self.healthy():
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"Triton at {self.url} was not ready within {timeout} s")
            await asyncio.sleep(POLL_S)  # a poll of another container's health, not a sync

    async def wait(self) -> int:
        """Until Triton stops answering (``FAILURES`` polls in a row) or ``stop``: 1, or 0."""
        failures = 0
        while not self._stopped.is_set():
            failures = 0 if await self.healthy("/v2/health/live") else failures + 1
            if failures >= FAILURES:
                return 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), POLL_S)
        return 0

    async def stop(self, grace: float = 0.0) -> None:
        """Stop watching it; Triton itself runs on (its container is not ours)."""
        self._stopped.set()

    def log_tail(self, lines: int = 15) -> str:
        return f"(Triton at {self.url} stopped answering its live endpoint; its log is its own)"
