"""``tdk local up --replicas N --detach``: the replica set's supervisor in the background.

``spawn`` starts ``python -m infra.targets.local.replica_daemon`` in a session of its own; the
supervisor starts HAProxy and the N front+Triton pairs (``replicas.ReplicaSet``), then writes
the set's state file ``local-<name>.json`` naming itself and HAProxy's URL, as a single
endpoint's does. ``tdk local down <name>`` SIGTERMs it (``serve.stop``) like any endpoint: it
stops HAProxy and every replica (each stops its Triton), removes its state file and exits.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path

from infra.targets.local import lock, serve
from infra.targets.local.endpoint_state import (
    EndpointState,
    process_identity,
    remove_state,
    state_path,
    write_state,
)
from infra.targets.local.options import EndpointOptions
from infra.targets.local.replicas import ReplicaSet, find_haproxy
from infra.triton_runtime.private import state_dir
from tdk.errors import TdkError

PROG = "python -m infra.targets.local.replica_daemon"


def work_dir(name: str) -> Path:
    """Where the set ``name`` keeps HAProxy's configuration, admin socket and log."""
    return state_dir() / f"local-{name}-replicas"


def spawn(options: EndpointOptions, replicas: int, timeout: float = 600.0) -> EndpointState:
    """Start the set in the background; its state once HAProxy and every replica serve. It
    holds the set's name lock as a single endpoint does (``serve.spawn_detached``)."""
    find_haproxy()
    argv = [*options.to_argv(), "--replicas", str(replicas)]
    return serve.spawn_detached(PROG.removeprefix("python -m "), argv, options.name, timeout)


def supervise(options: EndpointOptions, replicas: int, lock_fd: int | None = None) -> None:
    """Run the set until SIGTERM or SIGINT; its state file exists while it serves, the name's
    lock (``lock_fd``: the one ``spawn`` took) while the process does."""
    held = lock.hold_name(options.name, lock_fd)
    try:
        _supervise(options, replicas)
    finally:
        os.close(held)


def _supervise(options: EndpointOptions, replicas: int) -> None:
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    work = work_dir(options.name)
    group = ReplicaSet(options, replicas, work)
    path = state_path(options.name)
    try:
        url = group.start()
        pid = os.getpid()
        state = EndpointState(
            name=options.name,
            pid=pid,
            port=group.port,
            url=url,
            release=options.release,
            workdir=str(work),
            log=str(path.with_suffix(".log")),
            identity=process_identity(pid),
        )
        write_state(state)
        print(f"ready: {url}/endpoints/{options.name}/invocations", flush=True)
        stop.wait()
    finally:
        remove_state(options.name)
        group.stop()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = list(sys.argv[1:] if argv is None else argv)
    at = args.index("--replicas")
    replicas = int(args[at + 1])
    options, ns = EndpointOptions.from_argv(args[:at] + args[at + 2 :], PROG)
    try:
        supervise(options, replicas, ns.lock_fd)
    except TdkError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
