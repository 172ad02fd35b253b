"""Run a local endpoint: uvicorn (httptools + uvloop) on 127.0.0.1, plus its state file
(``endpoint_state``: written once it serves, removed when it stops).

The HTTP protocol (``protocol``) is uvicorn's httptools one with a zero-copy body path, a
header timer and a connection cap. ``stop`` is what `tdk local down` runs (``stopping``: what a
stop waits for, said when it takes over a second).

``python -m infra.targets.local.serve`` is what ``tdk local up --detach`` starts in the background;
the state file (pid, port, release) under ``$TDK_STATE_DIR`` (default ``~/.cache/tdk``) is how
``tdk local status`` and ``tdk local down`` find it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from infra.targets.local import lock, stopping, workdir
from infra.targets.local.allocator import keep_body_buffers
from infra.targets.local.endpoint_state import (
    EndpointState,
    is_endpoint,
    process_identity,
    read_state,
    remove_state,
    state_path,
    write_state,
)
from infra.targets.local.options import EndpointOptions, local_command
from infra.targets.local.protocol import protocol_class
from infra.triton_runtime import shm
from infra.triton_runtime.private import check_state_dir, open_private, state_dir
from infra.triton_runtime.runtime import find_runtime
from tdk.errors import TdkError
from tdk.redact import RedactingStream

PROG = "python -m infra.targets.local.serve"


def bind(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A listening socket on ``host`` (loopback unless told; ``port`` 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        raise TdkError(
            f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}",
            hint="pick another --port, or stop what uses it",
        ) from exc
    sock.listen(1024)
    return sock


def run(
    settings: EndpointOptions,
    log_path: Path | None = None,
    announce: Callable[[str], None] | None = None,
    lock_fd: int | None = None,
) -> None:
    """Serve in this process until SIGINT/SIGTERM; the state file lives while it runs, the
    name's lock (``lock_fd``: the one ``spawn`` took) while the process does."""
    held = lock.hold_name(settings.name, lock_fd)
    try:
        _run(settings, log_path, announce)
    finally:
        os.close(held)


def run_front(settings: EndpointOptions, announce: Callable[[str], None] | None = None) -> None:
    """Serve a pod's front (``tdk front serve``) until SIGTERM: the Triton is the pod's
    (``--triton-url``), the address ``--host``; no state file or name lock (one per pod)."""
    _run(settings, None, announce, record=False)


def _run(
    settings: EndpointOptions,
    log_path: Path | None,
    announce: Callable[[str], None] | None,
    record: bool = True,
) -> None:
    import uvicorn

    # here, not at the top: `tdk local down` and `status` import this module, and the front
    # pulls in numpy and the clients (about 0.3 s of the 1.5 s `down` has)
    from infra.targets.local.front import Front
    from infra.targets.local.manager import ModelManager

    keep_body_buffers()  # before the first body is read: no page faults per request
    runtime = find_runtime() if settings.triton_url is None else None
    sock = bind(settings.port, settings.host)
    actual = int(sock.getsockname()[1])
    state = EndpointState(
        name=settings.name,
        pid=os.getpid(),
        port=actual,
        url=f"http://127.0.0.1:{actual}",
        release=settings.release,
        workdir=str(settings.workdir_path),
        log=str(log_path or ""),
        identity=process_identity(os.getpid()),
        control=secrets.token_hex(16),
    )

    def ready() -> None:
        if record:
            write_state(state)
        if announce is not None:
            announce(state.url)

    front = Front(ModelManager(settings, runtime), on_ready=ready)
    front.control = state.control
    config = uvicorn.Config(
        front,
        loop="uvloop",
        http=protocol_class(
            settings.header_timeout,
            connection_cap(settings.max_connections),
            settings.max_client_connections,
        ),
        lifespan="on",
        access_log=False,
        log_level="warning",
        timeout_keep_alive=max(1, round(settings.keep_alive)),
        backlog=1024,
        proxy_headers=False,
        server_header=False,
        date_header=False,
    )
    server = uvicorn.Server(config)
    front.stopping = lambda: server.should_exit
    manager = front.manager
    if record:
        stopping.note_on_exit(server, settings.name, lambda: stopping.Stopping(
            len(server.server_state.tasks), sum(m.loaded for m in manager.models.values())
        ))  # fmt: skip
    try:
        try:
            server.run(sockets=[sock])
        except SystemExit:  # uvicorn exits 3 when the lifespan startup failed
            if front.startup_error is None:
                raise
        failure = front.startup_error
        if isinstance(failure, TdkError):
            raise failure
        if failure is not None:
            raise TdkError(f"the local endpoint failed to start: {failure}", hint="see its log")
    finally:
        if record:
            remove_state(settings.name)


def connection_cap(wanted: int) -> int:
    """``--max-connections``, kept within half the open-file limit (the rest is for Triton's
    connections, the store and extracted files)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return min(wanted, max(8, soft // 2))


def spawn(options: EndpointOptions, timeout: float = 120.0) -> EndpointState:
    """Start ``python -m infra.targets.local.serve`` in the background; wait for its state."""
    return spawn_detached("infra.targets.local.serve", options.to_argv(), options.name, timeout)


def spawn_detached(module: str, args: list[str], name: str, timeout: float) -> EndpointState:
    """``python -m <module> <args>`` in a session of its own, serving the endpoint ``name``; its
    state once it serves. The name's lock is taken here, before the log or the state file is
    touched, and handed down (``--lock-fd``) for the child to hold for its life: two starts of
    one name cannot both pass. A start that fails (or Ctrl-C) stops the child."""
    if read_state(name) is not None:
        raise TdkError(
            f"a local endpoint named {name!r} is already running",
            hint=f"stop it with `{local_command('down', name)}`, or pick another --endpoint",
        )
    held = lock.hold_name(name)
    try:
        log_path = check_state_dir(state_dir()) / f"local-{name}.log"
        state_path(name).unlink(missing_ok=True)
        args = [*args, "--log", str(log_path), "--lock-fd", str(held)]
        with open_private(log_path) as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", module, *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=str(Path(__file__).resolve().parents[3]),
                pass_fds=(held,),
            )
    finally:
        os.close(held)  # the child holds it now
    try:
        return wait_started(proc, name, log_path, timeout)
    except BaseException:  # Ctrl-C while it starts: the child goes too (it honours SIGTERM)
        proc.terminate()
        proc.wait()
        raise


def wait_started(
    proc: subprocess.Popen[bytes], name: str, log_path: Path, timeout: float
) -> EndpointState:
    """The child's state once it serves; TdkError when it exits or takes over ``timeout``."""
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
    raise TdkError(
        f"the local endpoint did not start within {timeout:.0f} s", hint=f"see {log_path}"
    )


def stop(
    state: EndpointState, timeout: float = 30.0, on_wait: Callable[[str], None] | None = None
) -> None:
    """SIGTERM the endpoint (it stops Triton), SIGKILL after ``timeout``; then remove its state
    file and what a cut-off download left in its staging dir. Each signal goes only to the
    process ``state`` identifies: a pid since reused by another process is never signalled.
    A stop that takes over ``stopping.NOTICE_AFTER_S`` tells ``on_wait``, once, what it waits
    for (the requests in flight, Triton's models)."""
    if is_endpoint(state):
        _signal(state, signal.SIGTERM)
        started = time.monotonic()
        told = False
        while is_endpoint(state) and time.monotonic() < started + timeout:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(state.pid, os.WNOHANG)  # reap it when it is our own child
            waited = time.monotonic() - started
            if on_wait is not None and not told and waited >= stopping.NOTICE_AFTER_S:
                told = True
                on_wait(stopping.waiting_message(state.name, state.pid, timeout))
            time.sleep(0.02)  # a poll of the pid, not a wait for an event: 20 ms
        if is_endpoint(state):
            _signal(state, signal.SIGKILL)
    state_path(state.name).unlink(missing_ok=True)
    stopping.clear_note(state.name)
    shm.sweep_orphans()  # the regions of a Triton whose front had to be killed
    root = Path(state.workdir)
    if (root / workdir.MARKER).is_file():
        workdir.remove(root, root / "staging")


def _signal(state: EndpointState, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(state.pid, number)


def leave_now(code: int) -> NoReturn:
    """Exit at once, after a start that was told to stop: everything of ours is cleaned up by
    now, but a store client's worker thread may still wait on a stalled server (s3transfer's
    pool, which the interpreter would join for minutes)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    from infra.targets.local.front import StartInterrupted

    # its output is the endpoint's log: no credential a URL carried is written there
    sys.stdout = RedactingStream(sys.stdout)
    sys.stderr = RedactingStream(sys.stderr)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        options, ns = EndpointOptions.from_argv(sys.argv[1:] if argv is None else argv, PROG)
        run(options, Path(ns.log) if ns.log else None, lock_fd=ns.lock_fd)
    except TdkError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        if isinstance(exc, StartInterrupted):
            leave_now(128 + signal.SIGTERM)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
