"""The front's end of ``netns.py``: start Triton in namespaces of its own (network where
``--triton-netns`` allows, mount always where the kernel allows), its secret kept off its
command line, and open connections to it (file descriptors passed over a socket pair, or,
for other processes of this user, over the connector: a Unix socket in a 0700 directory)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tdk.errors import TdkError

LAUNCHER = Path(__file__).with_name("netns.py")
#: ``--triton-netns``: auto (a namespace when the kernel allows one), on (refuse to start
#: without), off (Triton's listeners on the host's 127.0.0.1, as before)
MODES = ("auto", "on", "off")
#: what each protection (``netns.PROTECTIONS``) lacking exposes, said once per Triton
EXPOSED = {
    "net": "Triton listens on this machine's 127.0.0.1: other local users reach its health and "
    "inference APIs (every other API answers 403 without the per-start secret)",
    "mount": "Triton's /dev/shm is this machine's: the Python backend's regions (every request "
    "and response) are 0644 from their creation until the load ends (then 0600), and a user "
    "who opens one in that moment reads all later ones",
    "tmp": "the Python backend's directory (/tmp/python_env_XXXXXX) stays in this machine's "
    "/tmp whenever Triton is killed",
    "readonly": "a release's code (model.py) can write wherever you can",
    "argv": "the per-start secret is on Triton's command line until Triton answers (about "
    "0.4 s): a local user who reads /proc/<pid>/cmdline then can load models, i.e. run code, "
    "as you",
}


@dataclass(frozen=True)
class Started:
    """What the launcher said once Triton started: its pid, the protections in place and
    why the others are not."""

    pid: int
    held: frozenset[str]
    why: str

    def exposures(self, wanted: Sequence[str]) -> list[str]:
        """What each protection of ``wanted`` that is not held exposes."""
        return [EXPOSED[name] for name in wanted if name not in self.held]


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


#: what ``Link.connect`` asks the launcher for: a connection to Triton's HTTP or gRPC port
HTTP, GRPC = b"c", b"g"


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
    def command(
        control_fd: int, port: int, netns: str, connector_fd: int | None = None, grpc_port: int = 0
    ) -> list[str]:
        """The launcher's command line (Triton's HTTP port ``port`` and gRPC port
        ``grpc_port``, ``--triton-netns``, the connector's listening socket); ``send_command``
        then hands it Triton's, which holds the secret, through the socket."""
        head = [sys.executable, "-I", str(LAUNCHER), "--control-fd", str(control_fd)]
        tail = [] if connector_fd is None else ["--connector-fd", str(connector_fd)]
        ports = ["--port", str(port), "--grpc-port", str(grpc_port)]
        return [*head, *ports, "--netns", netns, *tail]

    def send_command(
        self,
        triton: list[str],
        secret: list[int],
        writable: list[Path],
        tmp: Path,
        seen: list[Path],
    ) -> None:
        """Triton's command line for the launcher to start, which of its arguments are
        secret, the directories Triton may write in, the one to be its /tmp and the paths it
        must still see when /tmp is its own (one datagram; the launcher reads it first, so
        the socket's buffer holds it until then)."""
        request = {
            "command": triton,
            "secret": secret,
            "writable": [str(p) for p in writable],
            "tmp": str(tmp),
            "seen": [str(p) for p in seen],
        }
        self.sock.send(json.dumps(request).encode())

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

    async def hello(self, timeout: float) -> Started:
        """What the launcher said once it started Triton; NamespaceUnavailable when it could
        not (``--triton-netns on`` and no network namespace)."""
        try:
            async with asyncio.timeout(timeout):
                message, _ = await self._receive()
        except (TimeoutError, OSError) as exc:
            raise NamespaceUnavailable(f"the namespace launcher did not answer ({exc})") from exc
        kind, _, rest = message.decode("utf-8", "replace").partition(" ")
        pid, _, protections = rest.partition(" ")
        if kind == "pid" and pid.isdigit():
            held, _, why = protections.partition(";")
            return Started(int(pid), frozenset(filter(None, held.split(","))), why)
        why = rest if kind == "unavailable" else f"the launcher said {message[:100]!r}"
        raise NamespaceUnavailable(why or "the namespace launcher exited")

    async def connect(self, kind: bytes = HTTP) -> socket.socket:
        """A new TCP connection to Triton's HTTP listener (``kind`` ``GRPC``: its gRPC
        listener), made inside its namespace."""
        async with self._lock:
            try:
                self.sock.send(kind)
                message, fds = await self._receive()
            except OSError as exc:
                raise ConnectionError(f"Triton's namespace launcher is gone ({exc})") from exc
        conn = _received(message, fds)
        conn.setblocking(False)
        return conn

    def close(self) -> None:
        self.sock.close()


def _received(message: bytes, fds: list[int]) -> socket.socket:
    """The connection the launcher passed with ``ok``; ConnectionError with its reason else."""
    if message == b"ok" and len(fds) == 1:
        return socket.socket(fileno=fds[0])
    for fd in fds:
        socket.socket(fileno=fd).close()
    text = message.decode("utf-8", "replace").removeprefix("err ")
    raise ConnectionError(text or "Triton's namespace launcher is gone")


def by_directory(path: Path) -> tuple[str, int]:
    """``path`` as ``/proc/self/fd/<directory>/<name>`` (a Unix socket's address holds at most
    107 bytes, a work directory's path may be longer) and the directory's descriptor, which
    the caller closes once the socket is bound or connected."""
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{path.name}", fd


def listen(path: Path) -> socket.socket:
    """The connector's listening socket at ``path`` (0600; its directory is this user's, 0700),
    handed to the launcher (``Link.command``), which answers on it."""
    address, fd = by_directory(path)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(address)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            listener.bind(address)
            os.chmod(address, 0o600)
            listener.listen(CONNECTOR_BACKLOG)
        except BaseException:
            listener.close()
            raise
    finally:
        os.close(fd)
    return listener


#: connection requests waiting for the launcher at once (a load generator's threads each ask)
CONNECTOR_BACKLOG = 256


@dataclass(frozen=True)
class Connector:
    """Connections to Triton's HTTP listener for any process of this user (a load generator's
    processes: it is picklable): one request to the launcher over the connector socket at
    ``path``, answered with a TCP connection made inside Triton's namespace (``SCM_RIGHTS``).
    Bytes then flow on that connection directly: nothing relays them. Another user can neither
    enter the socket's directory nor pass the launcher's check of its peer's uid."""

    path: str
    timeout: float = 10.0

    def __call__(self) -> socket.socket:
        try:
            message, fds = self._ask()
        except OSError as exc:
            why = f"Triton's launcher did not answer at {self.path}: {exc}"
            raise ConnectionError(why) from exc
        conn = _received(message, fds)
        conn.setblocking(True)
        return conn

    def _ask(self) -> tuple[bytes, list[int]]:
        address, fd = by_directory(Path(self.path))
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as ask:
                ask.settimeout(self.timeout)
                ask.connect(address)
                ask.send(b"c")
                message, fds, _, _ = socket.recv_fds(ask, 512, 1)
                return message, fds
        finally:
            os.close(fd)
