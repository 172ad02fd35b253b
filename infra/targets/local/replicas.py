"""``tdk local up --replicas N``: N front+Triton pairs behind HAProxy, routed as the cloud's Envoy.

HAProxy (Debian's 2.6) hashes the TargetModel header consistently with a bounded load, as the
Kubernetes stacks' Envoy Gateway does: ``balance hdr(X-Amzn-SageMaker-Target-Model)``,
``hash-type consistent``, ``hash-balance-factor 200`` (a hot model spills to the next server on
the ring; 200 is HAProxy's bound that never lets a server hold more than the stacks' Envoy at
its ``hash_balance_factor`` 150 lets a pod hold: ``infra.planning.routing``).
Directives checked against https://docs.haproxy.org/2.6/configuration.html (balance hdr,
hash-type, hash-balance-factor, retry-on; checked 2026-12-07). The configuration is a pure
function of the replicas' ports; it declares spare server slots in maintenance so that replicas
join and leave through HAProxy's runtime API (``set server ... addr``,
``state ready|drain|maint``) without a reload: a leaving replica is drained (no new requests)
until it holds no connection, then stopped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from infra.planning.routing import HAPROXY_HASH_BALANCE_FACTOR
from infra.targets.local import lock, serve
from infra.targets.local.endpoint_state import EndpointState
from infra.targets.local.options import EndpointOptions
from tdk.errors import TdkError

TARGET_HEADER = "X-Amzn-SageMaker-Target-Model"
BACKEND = "replicas"
#: spare server slots declared beyond the replicas at start (joins beyond them are refused)
SPARE_SLOTS = 4
HAPROXY_HINT = "install it: sudo apt-get install -y haproxy (Debian 12 has 2.6), or `make setup`"


def haproxy_config(
    listener: str, admin_socket: Path, servers: Sequence[int | None], name: str = "local"
) -> str:
    """HAProxy's configuration: ``listener`` (``fd@N``, a socket the kit bound and passes on)
    in front of one server per entry of ``servers`` (a replica's port, or None for a spare slot,
    held in maintenance). Replicas are named ``<name>-r<i>``: InvokeEndpoint for ``name`` is
    handed on as ``/invocations``."""
    lines = [
        "global",
        f"    stats socket {admin_socket} mode 600 level admin",
        "    maxconn 4096",
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        "    timeout client 300s",
        "    timeout server 300s",
        "    timeout http-keep-alive 10s",
        # a replica that refuses a connection (stopping) is retried on another server
        "    retries 3",
        "    option redispatch 1",
        "    retry-on conn-failure empty-response",
        "frontend mme",
        f"    bind {listener}",
        rf"    http-request replace-path ^/endpoints/{name}/invocations$ /invocations",
        f"    default_backend {BACKEND}",
        f"backend {BACKEND}",
        f"    balance hdr({TARGET_HEADER})",
        "    hash-type consistent",
        f"    hash-balance-factor {HAPROXY_HASH_BALANCE_FACTOR}",
    ]
    for index, replica in enumerate(servers):
        if replica is None:
            lines.append(f"    server r{index} 127.0.0.1:1 disabled")
        else:
            lines.append(f"    server r{index} 127.0.0.1:{replica}")
    return "\n".join(lines) + "\n"


def find_haproxy() -> str:
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if found is None:
        raise TdkError(
            "haproxy is not installed (tdk local up --replicas needs it)", hint=HAPROXY_HINT
        )
    return found


def check_config(path: Path, pass_fds: Sequence[int] = ()) -> None:
    """``haproxy -c`` (given the descriptors the file binds): TdkError with HAProxy's message
    when it refuses the file."""
    result = subprocess.run(
        [find_haproxy(), "-c", "-f", str(path)],
        capture_output=True,
        text=True,
        check=False,
        pass_fds=tuple(pass_fds),
    )
    if result.returncode != 0:
        raise TdkError(f"HAProxy refused {path}: {result.stderr.strip()}", hint=HAPROXY_HINT)


class ReplicaSet:
    """N local endpoints (front + Triton each) behind one HAProxy on 127.0.0.1."""

    def __init__(self, options: EndpointOptions, replicas: int, work: Path) -> None:
        if replicas < 1:
            raise TdkError(f"--replicas {replicas}: expected 1 or more", hint="e.g. --replicas 4")
        self.options = options
        self.work = work
        self.slots: list[EndpointState | None] = [None] * (replicas + SPARE_SLOTS)
        self.wanted = replicas
        #: HAProxy's runtime API: in a private directory of its own under the temporary
        #: directory, as HAProxy 2.6 refuses a socket path over 97 characters (its ALERT
        #: "socket path ... too long (max 97)", seen 2026-12-07) and a state dir may be deeper
        self.admin = Path(tempfile.mkdtemp(prefix="tdk-haproxy-")) / "admin.sock"
        self.proxy: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def replicas(self) -> dict[int, EndpointState]:
        return {index: state for index, state in enumerate(self.slots) if state is not None}

    def _spawn(self, index: int) -> EndpointState:
        name = f"{self.options.name}-r{index}"
        return serve.spawn(dataclasses.replace(self.options, name=name, port=0, workdir=None))

    def start(self) -> str:
        """Start the replicas (in parallel) and HAProxy; HAProxy's URL."""
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            with ThreadPoolExecutor(self.wanted) as pool:
                for index, state in enumerate(pool.map(self._spawn, range(self.wanted))):
                    self.slots[index] = state
            self._start_proxy()
        except BaseException:
            self.stop()
            raise
        return self.url

    def _start_proxy(self) -> None:
        """HAProxy on a socket the kit binds itself and hands over (``bind fd@N``): HAProxy
        binds with SO_REUSEPORT, so a port picked free and then bound by HAProxy could be
        shared, silently, with another of the same user's listeners (two sets' requests
        spread over both); a socket bound here is this set's alone, or the start fails."""
        listener = _listen(self.options.port)
        self.port = int(listener.getsockname()[1])
        ports = [state.port if state else None for state in self.slots]
        config = self.work / "haproxy.cfg"
        fd = listener.fileno()
        config.write_text(haproxy_config(f"fd@{fd}", self.admin, ports, self.options.name))
        with listener, (self.work / "haproxy.log").open("ab") as log:
            check_config(config, (fd,))
            self.proxy = subprocess.Popen(
                [find_haproxy(), "-db", "-f", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                pass_fds=(fd,),
            )
        deadline = time.monotonic() + 30
        while not self._admin_answers():
            if self.proxy.poll() is not None or time.monotonic() > deadline:
                raise TdkError("HAProxy did not start", hint=f"see {self.work / 'haproxy.log'}")
            time.sleep(0.05)  # a poll of its admin socket: HAProxy says nothing when it is up

    def _admin_answers(self) -> bool:
        try:
            return "Pid:" in self.command("show info")
        except OSError:
            return False

    def command(self, line: str) -> str:
        """One command on HAProxy's runtime API (the admin socket); its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(self.admin))
            sock.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def add(self) -> int:
        """Start one more replica and put it in HAProxy's ring; its slot index."""
        index = next((i for i, state in enumerate(self.slots) if state is None), None)
        if index is None:
            raise TdkError("no spare HAProxy slot left", hint="start with more --replicas")
        state = self._spawn(index)
        self.slots[index] = state
        self.command(f"set server {BACKEND}/r{index} addr 127.0.0.1 port {state.port}")
        self.command(f"set server {BACKEND}/r{index} state ready")
        return index

    def remove(
        self,
        index: int,
        timeout: float = 120.0,
        before_stop: Callable[[EndpointState], None] | None = None,
    ) -> None:
        """Drain replica ``index`` (HAProxy sends it nothing new), wait until it holds no
        connection, then take it out of the ring and stop it (``before_stop`` reads it last)."""
        state = self.slots[index]
        if state is None:
            raise TdkError(f"no replica in slot {index}", hint="see `replicas()`")
        self.command(f"set server {BACKEND}/r{index} state drain")
        deadline = time.monotonic() + timeout
        while self._connections(index) > 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # HAProxy has no event for "drained": a poll of its counters
        self.command(f"set server {BACKEND}/r{index} state maint")
        if before_stop is not None:
            before_stop(state)
        serve.stop(state)
        self.slots[index] = None

    def _connections(self, index: int) -> int:
        """Requests HAProxy has in flight on server ``r<index>`` (``show stat``: scur)."""
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",") if lines else []
        for line in lines[1:]:
            fields = line.split(",")
            if fields[:2] == [BACKEND, f"r{index}"]:
                return int(fields[header.index("scur")] or 0)
        return 0

    def stop(self) -> None:
        """Stop HAProxy, then every replica, all at once (each stops its Triton)."""
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.terminate()
            try:
                self.proxy.wait(10)
            except subprocess.TimeoutExpired:
                self.proxy.kill()
                self.proxy.wait()
        shutil.rmtree(self.admin.parent, ignore_errors=True)
        running = [state for state in self.slots if state is not None]
        if running:
            with ThreadPoolExecutor(len(running)) as pool:
                list(pool.map(_stop_quietly, running))
        self.slots = [None] * len(self.slots)


def _stop_quietly(state: EndpointState) -> None:
    with contextlib.suppress(TdkError, OSError):
        serve.stop(state)


def _listen(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free one), for HAProxy to serve."""
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise TdkError(
            f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror})",
            hint="pick another --port, or --port 0 for a free one",
        ) from None
    return sock


def serve_foreground(
    options: EndpointOptions, replicas: int, work: Path, announce: Callable[[str], None]
) -> None:
    """``tdk local up --replicas N``: start the set, say its URL, stop it all on SIGINT/SIGTERM;
    the set's name is locked meanwhile, as a single endpoint's is."""
    held = lock.hold_name(options.name)
    try:
        _serve_foreground(options, replicas, work, announce)
    finally:
        os.close(held)


def _serve_foreground(
    options: EndpointOptions, replicas: int, work: Path, announce: Callable[[str], None]
) -> None:
    stop = threading.Event()
    previous = {
        number: signal.signal(number, lambda *_: stop.set())
        for number in (signal.SIGINT, signal.SIGTERM)
    }
    group = ReplicaSet(options, replicas, work)
    try:
        announce(group.start())
        stop.wait()
    finally:
        group.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)
