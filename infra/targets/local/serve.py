"""Run a local endpoint: uvicorn (httptools + uvloop) on 127.0.0.1, plus its state file.

The HTTP protocol is uvicorn's httptools one with one change on the hot path: a request body
chunk is handed to the app as the parser's own ``bytes`` instead of being appended to a
``bytearray`` and copied out again (two fewer copies of a 600 KB body; measured in bench).

``python -m infra.targets.local.serve`` is what ``tdk local up --detach`` starts in the background;
the state file (pid, port, store) under ``$TDK_STATE_DIR`` (default ``~/.cache/tdk``) is how
``tdk local status`` and ``tdk local down`` find it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from infra.targets.local.front import Front
from infra.targets.local.manager import SAGEMAKER_PAYLOAD_LIMIT, ModelManager, Settings
from infra.targets.local.runtime import find_runtime
from tdk.errors import TdkError

STATE_ENV = "TDK_STATE_DIR"


@dataclass(frozen=True)
class EndpointState:
    """What a running endpoint writes for ``status`` and ``down``."""

    name: str
    pid: int
    port: int
    url: str
    store: str
    workdir: str
    log: str


def state_dir() -> Path:
    return Path(os.environ.get(STATE_ENV) or Path.home() / ".cache" / "tdk").expanduser()


def state_path(name: str) -> Path:
    return state_dir() / f"local-{name}.json"


def read_state(name: str) -> EndpointState | None:
    """The endpoint's state file, or None when absent or its process is gone."""
    path = state_path(name)
    try:
        state = EndpointState(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if not _alive(state.pid):
        path.unlink(missing_ok=True)
        return None
    return state


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_state(state: EndpointState) -> None:
    path = state_path(state.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=2))
    os.replace(tmp, path)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0 picks a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise TdkError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror}",
            hint="pick another --port, or stop what uses it (`tdk local down`)",
        ) from exc
    sock.listen(1024)
    return sock


def run(
    settings: Settings,
    port: int,
    log_path: Path | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve in this process until SIGINT/SIGTERM; the state file lives while it runs."""
    import uvicorn

    runtime = find_runtime()
    sock = bind(port)
    actual = int(sock.getsockname()[1])
    state = EndpointState(
        name=settings.name,
        pid=os.getpid(),
        port=actual,
        url=f"http://127.0.0.1:{actual}",
        store=settings.store_url,
        workdir=str(settings.workdir),
        log=str(log_path or ""),
    )

    def ready() -> None:
        _write_state(state)
        if announce is not None:
            announce(state.url)

    front = Front(ModelManager(settings, runtime), on_ready=ready)
    config = uvicorn.Config(
        front,
        loop="uvloop",
        http=_protocol_class(),
        lifespan="on",
        access_log=False,
        log_level="warning",
        timeout_keep_alive=75,
        backlog=1024,
        proxy_headers=False,
        server_header=False,
        date_header=False,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        with contextlib.suppress(OSError):
            current = json.loads(state_path(settings.name).read_text())
            if current.get("pid") == os.getpid():
                state_path(settings.name).unlink()


def _protocol_class() -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol, passing body chunks to ``receive()`` without copying."""
    from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class Protocol(HttpToolsProtocol):
        def on_body(self, body: bytes) -> None:
            cycle = self.cycle
            if cycle.body or cycle.response_complete or self.parser.should_upgrade():
                super().on_body(body)  # rare: appends to what receive() has not taken yet
                return
            # receive() sends bytes(cycle.body): no copy when it already is bytes
            cycle.body = body  # type: ignore[assignment]
            if len(body) > HIGH_WATER_LIMIT:
                self.flow.pause_reading()
            cycle.message_event.set()

    return Protocol


def spawn(args: list[str], name: str, timeout: float = 120.0) -> EndpointState:
    """Start ``python -m infra.targets.local.serve ARGS`` in the background; wait for its state."""
    if read_state(name) is not None:
        raise TdkError(
            f"a local endpoint named {name!r} is already running", hint="run `tdk local down`"
        )
    log_path = state_dir() / f"local-{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    state_path(name).unlink(missing_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "infra.targets.local.serve", *args, "--log", str(log_path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(Path(__file__).resolve().parents[3]),
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = read_state(name)
        if state is not None and state.pid == proc.pid:
            return state
        if proc.poll() is not None:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-12:])
            raise TdkError(
                f"the local endpoint exited while starting:\n{tail}", hint=f"see {log_path}"
            )
        time.sleep(0.1)
    proc.terminate()
    raise TdkError(
        f"the local endpoint did not start within {timeout:.0f} s", hint=f"see {log_path}"
    )


def parse_args(argv: list[str] | None = None) -> tuple[Settings, int, Path | None]:
    parser = argparse.ArgumentParser(prog="python -m infra.targets.local.serve")
    parser.add_argument("--store", required=True)
    parser.add_argument("--name", default="local")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--max-loaded-models", type=int, default=8)
    parser.add_argument("--cache-bytes", type=int, default=20 * 1024**3)
    parser.add_argument("--max-body-bytes", type=int, default=SAGEMAKER_PAYLOAD_LIMIT)
    parser.add_argument("--capacity-timeout", type=float, default=60.0)
    parser.add_argument("--min-residency", type=float, default=2.0)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--store-endpoint-url", default=None)
    parser.add_argument("--log", default=None)
    ns = parser.parse_args(argv)
    workdir = Path(ns.workdir) if ns.workdir else state_dir() / f"local-{ns.name}"
    settings = Settings(
        store_url=ns.store,
        workdir=workdir,
        name=ns.name,
        max_loaded=ns.max_loaded_models,
        cache_bytes=ns.cache_bytes,
        max_body=ns.max_body_bytes,
        capacity_timeout=ns.capacity_timeout,
        min_residency=ns.min_residency,
        store_endpoint_url=ns.store_endpoint_url,
    )
    return settings, ns.port, Path(ns.log) if ns.log else None


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings, port, log_path = parse_args(argv)
    try:
        run(settings, port, log_path)
    except TdkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
