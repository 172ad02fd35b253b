"""The front's way to Triton's gRPC listener when Triton runs in a network namespace of its own
(``grpc_control`` sends loads there: over HTTP a load holds one of Triton's HTTP threads and the
inference requests behind it).

The launcher (``netns.py``) passes back TCP connections made inside the namespace, one per
request (``isolation.Link.connect(GRPC)``); grpcio opens its own connections, lazily and again
after each loss, so it is pointed at a Unix socket in Triton's work directory instead (the
user's, 0700; the socket 0600), and each connection accepted there is joined to a new one of
the launcher's: bytes are copied both ways until either side closes, then both are closed.
The socket's address goes through ``/proc/self/fd/<dir>/`` (a Unix address holds 107 bytes at
most, a work directory's path may be longer), so the directory's descriptor stays open while
the relay lives: it is an address for this process only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

from infra.triton_runtime.isolation import by_directory

#: how much one read copies at a time
CHUNK = 1 << 16
#: connections grpcio may have waiting to be accepted
BACKLOG = 16


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes from ``reader`` to ``writer`` until ``reader`` ends (or either fails)."""
    with contextlib.suppress(OSError):
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()


class GrpcRelay:
    """A Unix socket at ``path`` whose connections ``connect`` joins to Triton's gRPC port."""

    def __init__(self, path: Path, connect: Callable[[], Awaitable[socket.socket]]) -> None:
        self.path = path
        self._connect = connect
        self._dir_fd: int | None = None
        self._address = ""
        self._server: asyncio.Server | None = None
        self._joined: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        """The relay as grpcio's target (valid in this process while the relay lives)."""
        return f"unix:{self._address}"

    async def start(self) -> None:
        """Listen at ``path`` (a stale socket there is replaced)."""
        self._address, self._dir_fd = by_directory(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._address)
            listener.bind(self._address)
            os.chmod(self._address, 0o600)
            listener.listen(BACKLOG)
            self._server = await asyncio.start_unix_server(self._accepted, sock=listener)
        except BaseException:
            listener.close()
            await self.close()
            raise

    def _accepted(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        """A task of ours per connection (``close`` ends them; the server's own it does not)."""
        task = asyncio.create_task(self._join(client_r, client_w))
        self._joined.add(task)
        task.add_done_callback(self._joined.discard)

    async def _join(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        triton_w: asyncio.StreamWriter | None = None
        try:
            triton_r, triton_w = await asyncio.open_connection(sock=await self._connect())
            copies = [_copy(client_r, triton_w), _copy(triton_r, client_w)]
            tasks = [asyncio.ensure_future(copy) for copy in copies]
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for copy in tasks:
                    copy.cancel()
        except OSError:
            pass  # Triton's launcher is gone or refused: grpcio sees the connection close
        finally:
            for writer in (client_w, triton_w):
                if writer is not None:
                    writer.close()

    async def close(self) -> None:
        """Stop listening, end every joined connection, remove the socket."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._joined):
            task.cancel()
        if self._joined:
            await asyncio.wait(list(self._joined))
        if self._dir_fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._address)
            os.close(self._dir_fd)
            self._dir_fd = None
