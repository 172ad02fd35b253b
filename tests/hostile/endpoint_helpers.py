"""Helpers for the endpoint and invoke hostile suites: tree snapshots and raw HTTP requests."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``roots``: path -> (size, mtime_ns); to compare before and after."""
    found: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                path = Path(folder, name)
                with_stat = path.lstat()
                found[str(path)] = (with_stat.st_size, with_stat.st_mtime_ns)
    return found


def post(
    url: str, headers: dict[str, str], body: bytes, path: str = "/endpoints/local/invocations"
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """One POST; (status, JSON body or {}, lower-case headers)."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("POST", path, body, headers)
        response = conn.getresponse()
        raw = response.read()
        document = json.loads(raw) if raw.startswith(b"{") else {}
        return response.status, document, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def stalled_request(url: str, target_model: str, length: int, sent: int) -> socket.socket:
    """A connection that sends the headers and ``sent`` of ``length`` body bytes, then stalls."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    head = (
        "POST /endpoints/local/invocations HTTP/1.1\r\n"
        f"Host: {host}\r\nContent-Type: application/json\r\n"
        f"X-Amzn-SageMaker-Target-Model: {target_model}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    )
    sock.sendall(head.encode() + b"{" * sent)
    return sock


def read_until_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection; AssertionError when it has
    not closed it within ``timeout`` seconds."""
    chunks = []
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    raise AssertionError(f"the server kept the connection open for {timeout} s: {chunks!r}")


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``condition`` until it returns something truthy; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


#: runs a command where the kernel refuses new network and mount namespaces (a user namespace
#: whose limits of them are 0): what a container without namespace rights gives the endpoint
NO_NAMESPACES = (
    "unshare",
    "--user",
    "--map-root-user",
    "sh",
    "-c",
    "echo 0 > /proc/sys/user/max_net_namespaces && echo 0 > /proc/sys/user/max_mnt_namespaces "
    '&& exec "$@"',
    "sh",
)


def no_namespaces_or_skip() -> None:
    """Skip unless ``NO_NAMESPACES`` can run here."""
    import pytest

    probe = subprocess.run([*NO_NAMESPACES, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a namespace without namespace rights here: {probe.stderr!r}")


def netns_or_skip() -> None:
    """Skip where this kernel refuses this user a network namespace (as the launcher asks for
    one: within a user namespace unless root)."""
    import pytest

    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    probe = subprocess.run(["unshare", *user, "--net", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"this kernel refuses a network namespace: {probe.stderr!r}")


def tcp_tables(net: str = "/proc/net") -> str:
    """The kernel's TCP tables of a network namespace (``/proc/<pid>/net``: that process's),
    IPv4 and IPv6 (Triton's gRPC listener is in the second)."""
    return Path(net, "tcp").read_text() + Path(net, "tcp6").read_text()


def listening(tables: str, port: int) -> bool:
    """Whether ``tables`` (``tcp_tables``) hold a listener on ``port``."""
    return any(
        line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A"
        for line in tables.splitlines()
        if line.split() and line.split()[0].endswith(":")
    )
