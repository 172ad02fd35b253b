"""A TCP proxy on 127.0.0.1 that injects network faults in front of a real server (moto).

Modes: ``forward`` (healthy), ``die_after`` (after N bytes towards the server, in total, it
closes every connection and stops listening: the endpoint is gone), ``cut_after`` (each
connection is reset once it has carried N bytes towards the server; new ones are accepted, so
small requests still succeed) and ``stall`` (accepts, reads, never answers).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Literal

Mode = Literal["forward", "die_after", "cut_after", "stall"]
BUFFER = 64 * 1024


class FaultProxy:
    """Threaded sockets; use as a context manager so every thread and socket is gone after."""

    def __init__(self, upstream_port: int, mode: Mode = "forward", limit: int = 0) -> None:
        self.upstream_port = upstream_port
        self.mode = mode
        self.limit = limit
        self.sent = 0  # bytes forwarded towards the server, all connections
        self.died = threading.Event()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])

    def __enter__(self) -> FaultProxy:
        self._spawn(self._accept_loop)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._close_all()
        for thread in self._threads:
            thread.join(timeout=10)

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def _close(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def _close_all(self) -> None:
        self._close(self._listener)
        with self._lock:
            sockets = list(self._sockets)
            self._sockets.clear()
        for sock in sockets:
            self._close(sock)

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._track(client)
            if self.mode == "stall":
                self._spawn(self._swallow, client)
                continue
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            self._track(upstream)
            budget = [self.limit]
            self._spawn(self._pump, client, upstream, True, budget)
            self._spawn(self._pump, upstream, client, False, budget)

    def _swallow(self, client: socket.socket) -> None:
        """Read whatever the client sends and never answer."""
        while not self._stopping.is_set():
            try:
                if not client.recv(BUFFER):
                    return
            except OSError:
                return

    def _pump(
        self, src: socket.socket, dst: socket.socket, outbound: bool, budget: list[int]
    ) -> None:
        while True:
            try:
                data = src.recv(BUFFER)
                if not data:
                    break
                if outbound and self._over(len(data), budget):
                    break
                dst.sendall(data)
            except OSError:
                break
        self._close(src)
        self._close(dst)

    def _over(self, size: int, budget: list[int]) -> bool:
        """Count bytes towards the server; True when this connection must end now."""
        with self._lock:
            self.sent += size
            total = self.sent
        if self.mode == "die_after" and total > self.limit:
            self.died.set()
            self._close_all()
            return True
        if self.mode == "cut_after":
            budget[0] -= size
            return budget[0] < 0
        return False
