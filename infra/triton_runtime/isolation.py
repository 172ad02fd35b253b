"""The front's end of ``netns.py``: start Triton in a network namespace of its own and open
connections to it (file descriptors passed over a socket pair; see ``netns.py``)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

from tdk.errors import TdkError

LAUNCHER = Path(__file__).with_name("netns.py")
#: ``--triton-netns``: auto (a namespace when the kernel allows one), on (refuse to start
#: without), off (Triton's listeners on the host's 127.0.0.1, as before)
MODES = ("auto", "on", "off")
FALLBACK = (
    "Triton runs in this machine's network namespace (%s): other local users can reach its "
    "127.0.0.1 listeners; they get health and inference, every other Triton API answers 403 "
    "without the per-start secret, which they can read on Triton's command line for the moment "
    "between its start and the front hiding it (README.md, 'Trust boundaries')"
)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class NamespaceUnavailable(TdkError):
    """The kernel refused a network (or user) namespace."""


class Link:
    """One control socket to a ``netns.py`` launcher."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self._lock = asyncio.Lock()

    @classmethod
    def pair(cls) -> tuple[Link, socket.socket]:
        """Our end as a Link, and the end the launcher inherits."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        return cls(ours), theirs

    @staticmethod
    def command(control_fd: int, port: int) -> list[str]:
        """The launcher's command line (Triton's HTTP port ``port``); ``send_command`` then
        hands it Triton's, which holds the secret, through the socket."""
        head = [sys.executable, "-I", str(LAUNCHER), "--control-fd", str(control_fd)]
        return [*head, "--port", str(port)]

    def send_command(self, triton: list[str]) -> None:
        """Triton's command line for the launcher to start (one datagram; the launcher reads
        it first, so the socket's buffer holds it until then)."""
        self.sock.send(json.dumps(triton).encode())

    async def _receive(self) -> tuple[bytes, list[int]]:
        loop = asyncio.get_running_loop()
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(self.sock, 512, 1)
                return message, fds
            except BlockingIOError:
                readable: asyncio.Future[None] = loop.create_future()
                fd = self.sock.fileno()
                loop.add_reader(fd, _wake, readable)
                try:
                    await readable
                finally:
                    loop.remove_reader(fd)

    async def hello(self, timeout: float) -> int:
        """Triton's pid once the launcher started it; NamespaceUnavailable when it could not."""
        try:
            async with asyncio.timeout(timeout):
                message, _ = await self._receive()
        except (TimeoutError, OSError) as exc:
            raise NamespaceUnavailable(f"the namespace launcher did not answer ({exc})") from exc
        kind, _, rest = message.decode("utf-8", "replace").partition(" ")
        if kind == "pid" and rest.isdigit():
            return int(rest)
        why = rest if kind == "unavailable" else f"the launcher said {message[:100]!r}"
        raise NamespaceUnavailable(why or "the namespace launcher exited")

    async def connect(self) -> socket.socket:
        """A new TCP connection to Triton's HTTP listener, made inside its namespace."""
        async with self._lock:
            try:
                self.sock.send(b"c")
                message, fds = await self._receive()
            except OSError as exc:
                raise ConnectionError(f"Triton's namespace launcher is gone ({exc})") from exc
        if message == b"ok" and len(fds) == 1:
            conn = socket.socket(fileno=fds[0])
            conn.setblocking(False)
            return conn
        for fd in fds:
            socket.socket(fileno=fd).close()
        text = message.decode("utf-8", "replace").removeprefix("err ")
        raise ConnectionError(text or "Triton's namespace launcher is gone")

    def close(self) -> None:
        self.sock.close()
