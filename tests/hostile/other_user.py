"""Another local user (uid 65534) probing the local endpoint: what it can reach and read.

``as_other_user(plan)`` runs this file as a separate process with uid and gid 65534 (the test
process must be root, as in CI; otherwise the caller skips) under a Python that user may run;
the process does what ``plan`` lists and prints what happened, as JSON:

- ``http``: ``[method, url, body]`` requests (no secret header): the status, or the error;
- ``fetch``: URLs read with GET (no secret header): the body's first 4096 bytes, or the error;
- ``read``: paths opened for reading: ``"ok:<first bytes>"`` or the error's name;
- ``connect``: ``[host, port]`` TCP connections: ``"connected"`` or the error's name;
- ``ask``: Unix (seqpacket) socket paths, each asked for a connection as the launcher's
  connector is (``c``): ``"answered <message> with <n> fds"``, ``"closed"`` when the other end
  hung up without answering, or the error's name;
- ``unix``: Unix (stream) socket paths, each connected to: ``"connected"`` or the error's name;
- ``grpc``: ``[address, call]`` calls of tritonclient's gRPC client (``GRPC_CALLS``): ``"ok"``
  or the error's text (only where tritonclient is importable: ``in_subprocess``);
- ``watch``: a needle: every process's ``/proc/<pid>/cmdline`` is read over and over, from
  when the process prints ``ready`` until its standard input closes (``watching``); each
  argument of a command line holding the needle is kept (how often the scan ran: ``scans``);
- ``hold``: ``[url, n, target model]``: n connections, each sending an invocation's head and
  part of its body,
  held (after ``ready``) until standard input closes; ``held``: how many the server had not
  closed by then (``in_background``).

Standard library only otherwise: the other user's Python has none of the kit's packages. gRPC
calls never run in the test process itself: a process that used gRPC's poller aborts in the
children it forks later (``ev_epoll1_linux.cc: Check failed``).
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

NOBODY = 65534
_PYTHONS = (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3")


def _http(method: str, url: str, body: str) -> object:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    path = "/" + url.removeprefix("http://").split("/", 1)[1]
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, body.encode() or None, {"Content-Type": "application/json"})
        return conn.getresponse().status
    except OSError as exc:
        return exc.__class__.__name__
    finally:
        conn.close()


def _fetch(url: str) -> str:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return str(response.read(4096).decode("latin-1"))
    except OSError as exc:
        return exc.__class__.__name__


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return "ok:" + handle.read(4096).decode("latin-1")
    except OSError as exc:
        return exc.__class__.__name__


def _connect(host: str, port: int) -> str:
    try:
        with socket.create_connection((host, port), timeout=5):
            return "connected"
    except OSError as exc:
        return exc.__class__.__name__


def _ask(path: str) -> str:
    folder, name = os.path.split(path)
    try:  # through the directory's descriptor: a Unix socket's address holds 107 bytes at most
        fd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sock:
                sock.settimeout(10)
                sock.connect(f"/proc/self/fd/{fd}/{name}")
                sock.send(b"c")
                message, fds, _, _ = socket.recv_fds(sock, 512, 4)
        finally:
            os.close(fd)
    except OSError as exc:
        return exc.__class__.__name__
    for fd in fds:
        os.close(fd)
    return f"answered {message.decode('latin-1')} with {len(fds)} fds" if message else "closed"


def _unix(path: str) -> str:
    folder, name = os.path.split(path)
    try:
        fd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(f"/proc/self/fd/{fd}/{name}")
        finally:
            os.close(fd)
    except OSError as exc:
        return exc.__class__.__name__
    return "connected"


GRPC_CALLS = {
    "register-shm": lambda c: c.register_system_shared_memory("z", "/tdk-evil", 8),
    "log-settings": lambda c: c.update_log_settings({"log_verbose_level": 2}),
    "statistics": lambda c: c.get_inference_statistics(),
    "metadata": lambda c: c.get_server_metadata(),
    "load": lambda c: c.load_model("sleeper-0"),
    "live": lambda c: c.is_server_live(),
}


def _grpc(address: str, call: str) -> str:
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(address)
    try:
        answer = GRPC_CALLS[call](client)
        return "ok" if answer is not False else "false"
    except Exception as exc:
        return str(exc)
    finally:
        client.close()


def _cmdlines(needle: bytes) -> set[str]:
    found: set[str] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        if any(needle in arg for arg in args):
            found.update(arg.decode("latin-1") for arg in args)
    return found


def _watch(needle: str) -> tuple[list[str], int]:
    print("ready", flush=True)
    seen: set[str] = set()
    scans = 0
    while not select.select([sys.stdin], [], [], 0.002)[0]:  # a scan, then 2 ms for others
        seen |= _cmdlines(needle.encode())
        scans += 1
    return sorted(seen), scans


def probe(plan: dict[str, Any]) -> dict[str, Any]:
    """Carry out ``plan`` as the current user."""
    return {
        "uid": os.getuid(),
        "http": [_http(*request) for request in plan.get("http", [])],
        "fetch": [_fetch(url) for url in plan.get("fetch", [])],
        "read": [_read(path) for path in plan.get("read", [])],
        "connect": [_connect(host, port) for host, port in plan.get("connect", [])],
        "ask": [_ask(path) for path in plan.get("ask", [])],
        "unix": [_unix(path) for path in plan.get("unix", [])],
        "grpc": [_grpc(address, call) for address, call in plan.get("grpc", [])],
        **(_watched(plan["watch"]) if "watch" in plan else {}),
        **(_hold(*plan["hold"]) if "hold" in plan else {}),
    }


def _hold(url: str, count: int, target: str) -> dict[str, Any]:
    host, port = url.removeprefix("http://").split(":")
    head = (
        f"POST /endpoints/local/invocations HTTP/1.1\r\nHost: {host}\r\n"
        f"X-Amzn-SageMaker-Target-Model: {target}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    ).encode()
    held = []
    for _ in range(count):
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.sendall(head)
        held.append(sock)
    print("ready", flush=True)
    sys.stdin.read()
    still = 0
    for sock in held:
        sock.setblocking(False)
        try:
            sock.recv(1)  # an answer (503) or the end: refused
        except BlockingIOError:  # nothing to read, not closed: still held
            still += 1
        except OSError:  # reset: refused
            pass
        sock.close()
    return {"held": still}


def _watched(needle: str) -> dict[str, Any]:
    seen, scans = _watch(needle)
    return {"watch": seen, "scans": scans}


def in_subprocess(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` carried out by a child process of this user (gRPC stays out of this one)."""
    done = subprocess.run(
        [sys.executable, __file__, json.dumps(plan)], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return dict(json.loads(done.stdout))


def python_for_other_user() -> str | None:
    """A Python interpreter uid 65534 can run (a venv under /root is not one), or None."""
    for python in _PYTHONS:
        if not Path(python).exists():
            continue
        try:
            trial = subprocess.run(
                [python, "-I", "-c", "pass"],
                user=NOBODY,
                group=NOBODY,
                capture_output=True,
                check=False,
            )
        except OSError:  # not executable for that user
            continue
        if trial.returncode == 0:
            return python
    return None


def as_other_user(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` carried out by uid 65534 (the caller checked it runs as root)."""
    python = python_for_other_user()
    assert python is not None, "no Python that uid 65534 may run"
    done = subprocess.run(
        [python, "-I", __file__, json.dumps(plan)],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        capture_output=True,
        timeout=120,
        check=False,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    result = dict(json.loads(done.stdout))
    assert result["uid"] == NOBODY
    return result


@contextmanager
def watching(needle: str) -> Iterator[dict[str, Any]]:
    """uid 65534 reading every process's command line until the block ends; the dict is then
    filled with ``watch`` (each argument of the command lines holding ``needle``) and
    ``scans``."""
    with in_background({"watch": needle}) as result:
        yield result


@contextmanager
def in_background(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``plan`` (``watch`` or ``hold``) carried out by uid 65534 while the block runs; the
    dict is filled with what it found once the block ends."""
    python = python_for_other_user()
    assert python is not None, "no Python that uid 65534 may run"
    proc = subprocess.Popen(
        [python, "-I", __file__, json.dumps(plan)],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd="/",
    )
    assert proc.stdin is not None and proc.stdout is not None
    result: dict[str, Any] = {}
    try:
        assert proc.stdout.readline() == b"ready\n"
        yield result
    finally:
        proc.stdin.close()
        out = proc.stdout.read()
        proc.wait(120)
    result.update(json.loads(out))
    assert result["uid"] == NOBODY


if __name__ == "__main__":
    print(json.dumps(probe(json.loads(sys.argv[1]))))
