"""Whether a process holds the listening TCP sockets it was told to open (Linux ``/proc``).

The kit picks Triton's ports (``runtime.free_port``) and lets go of them before Triton binds
them; in that gap another process can take one (another Triton, or an outgoing connection's
ephemeral port). Triton 2.51 then starts gRPC and HTTP, logs its metrics service as started,
fails to bind the metrics port and exits with code 1 (measured 2026-11-27 with the runtime
wheel: ``failed to start Metrics service: Unavailable - Socket '127.0.0.1:N' already in use``).
So an HTTP answer does not mean Triton is up: ``holds`` asks the kernel whose listeners they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

#: the kernel's TCP tables; ``st`` 0A is LISTEN (include/net/tcp_states.h)
TCP_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
LISTEN = "0A"


def listening_inodes(port: int, tables: Iterable[Path] = TCP_TABLES) -> set[int]:
    """The socket inodes listening on ``port`` (any address), from the kernel's tables."""
    found: set[int] = set()
    for table in tables:
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) < 10 or fields[3] != LISTEN:
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(int(fields[9]))
    return found


def socket_inodes(pid: int, proc: Path = Path("/proc")) -> set[int]:
    """The inodes of the sockets process ``pid`` holds open."""
    found: set[int] = set()
    fd_dir = proc / str(pid) / "fd"
    for name in os.listdir(fd_dir):
        try:
            target = os.readlink(fd_dir / name)
        except OSError:  # closed since the listing
            continue
        if target.startswith("socket:[") and target.endswith("]"):
            found.add(int(target[8:-1]))
    return found


def holds(pid: int, ports: Iterable[int]) -> bool | None:
    """True when ``pid`` holds a listener on every one of ``ports``, False when one of them is
    not its own (or not listening yet), None when ``/proc`` cannot tell (not Linux)."""
    try:
        mine = socket_inodes(pid)
        return all(listening_inodes(port) & mine for port in ports)
    except (OSError, ValueError, IndexError):
        return None
