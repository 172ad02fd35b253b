"""Another local user (uid 65534) probing the local endpoint: what it can reach and read.

``as_other_user(plan)`` runs this file as a separate process with uid and gid 65534 (the test
process must be root, as in CI; otherwise the caller skips) under a Python that user may run;
the process does what ``plan`` lists and prints what happened, as JSON:

- ``http``: ``[method, url, body]`` requests (no secret header): the status, or the error;
- ``read``: paths opened for reading: ``"ok:<first bytes>"`` or the error's name;
- ``connect``: ``[host, port]`` TCP connections: ``"connected"`` or the error's name;
- ``grpc``: ``[address, call]`` calls of tritonclient's gRPC client (``GRPC_CALLS``): ``"ok"``
  or the error's text (only where tritonclient is importable: ``in_subprocess``).

Standard library only otherwise: the other user's Python has none of the kit's packages. gRPC
calls never run in the test process itself: a process that used gRPC's poller aborts in the
children it forks later (``ev_epoll1_linux.cc: Check failed``).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
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


def probe(plan: dict[str, Any]) -> dict[str, Any]:
    """Carry out ``plan`` as the current user."""
    return {
        "uid": os.getuid(),
        "http": [_http(*request) for request in plan.get("http", [])],
        "read": [_read(path) for path in plan.get("read", [])],
        "connect": [_connect(host, port) for host, port in plan.get("connect", [])],
        "grpc": [_grpc(address, call) for address, call in plan.get("grpc", [])],
    }


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


if __name__ == "__main__":
    print(json.dumps(probe(json.loads(sys.argv[1]))))
