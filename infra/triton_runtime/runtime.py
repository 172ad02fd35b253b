"""The Triton runtime: the ``nvidia-pytriton`` wheel's server started as a loopback-only child.

Nothing inside the runtime's site-packages is modified: a private backend directory of symlinks
points Triton at the wheel's Python backend, and the runtime venv's ``bin`` goes first on ``PATH``
so the Python backend stub imports that venv's numpy and onnxruntime.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from infra.triton_runtime import isolation, listeners, shm
from infra.triton_runtime.grpc_relay import GrpcRelay
from infra.triton_runtime.private import hide_argument, open_private, private_dir, write_private
from tdk.errors import TdkError

logger = logging.getLogger("tdk.local")
RUNTIME_ENV = "TDK_TRITON_RUNTIME"
#: the runtime venv's folder name, beside the kit's own venv (`make setup`, `make demo`)
RUNTIME_DIR = ".venv-triton"
REPO_ROOT = Path(__file__).resolve().parents[2]
_PR_SET_PDEATHSIG = 1
#: the request header every restricted Triton API demands (``--http-restricted-api``)
REPOSITORY_HEADER = "tdk-repository-key"
#: every Triton API category but health and inference: reachable only with the per-start
#: secret. The category names are Triton's own (RESTRICTED_CATEGORY_NAMES in
#: https://github.com/triton-inference-server/server/blob/main/src/restricted_features.h;
#: `tritonserver --help` of the runtime wheel's 2.51 lists the same; checked 2026-11-27).
RESTRICTED_APIS = (
    "metadata",
    "shared-memory",
    "model-config",
    "model-repository",
    "statistics",
    "trace",
    "logging",
)
TRITON_FILE = "triton.json"
#: the connector's socket in the work dir (``TritonProcess(connector=True)``)
CONNECTOR_FILE = "triton.sock"
#: the front's relay to Triton's gRPC listener in a network namespace of its own (``grpc_relay``)
GRPC_RELAY_FILE = "triton-grpc.sock"
#: starts on fresh ports after Triton lost one of its ports to another process (``listeners``)
PORT_TRIES = 3
#: what Triton 2.51 logs when a port it was given is taken (measured 2026-11-27, runtime wheel)
PORT_TAKEN = "already in use"
SHM_DIR = shm.SHM_DIR  # where a Triton on the host's /dev/shm keeps the Python backend's regions
#: Triton's /tmp in its mount namespace, a directory of its work dir (``netns.py``): the Python
#: backend makes its environments' directory there whatever TMPDIR says (mkdtemp of
#: "/tmp/python_env_XXXXXX" at its start, removed only when Triton exits cleanly; Triton aborts
#: when it cannot make it: measured 2026-12-07 with the runtime wheel; src/pb_env.cc of
#: triton-inference-server/python_backend, read 2026-12-07), so a killed Triton's stays in the
#: work dir, emptied at the next start and by ``stop``, instead of this machine's /tmp
NS_TMP = "ns-tmp"


#: the isolation warnings this process gave (each said once, however often Triton restarts)
_ANNOUNCED: set[tuple[str, ...]] = set()


class _PortTaken(Exception):
    """Triton exited because one of the ports it was given was taken meanwhile."""


class RuntimeMissing(TdkError):
    """The Triton runtime virtualenv is absent or incomplete."""


@dataclass(frozen=True)
class Runtime:
    """Paths inside the runtime venv that starting Triton needs."""

    venv: Path
    server: Path  # .../pytriton/tritonserver/bin/tritonserver
    libs: Path  # .../nvidia_pytriton.libs
    python_backend: Path  # .../tritonserver/backends/python
    stub: Path  # .../python_backend_stubs/3.x/triton_python_backend_stub

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


def _default_venv() -> Path:
    beside = Path(sys.prefix).parent / RUNTIME_DIR
    checkout = REPO_ROOT / RUNTIME_DIR
    return checkout if checkout.is_dir() or not beside.is_dir() else beside


def find_runtime(venv: Path | None = None) -> Runtime:
    """The runtime venv: ``$TDK_TRITON_RUNTIME``, else ``<repo>/.venv-triton``, else the
    ``.venv-triton`` beside the venv tdk runs from (a non-editable install, as `make demo`
    makes, lives in site-packages, far from the checkout); checked whole."""
    if venv is None:
        configured = os.environ.get(RUNTIME_ENV)
        venv = Path(configured).expanduser() if configured else _default_venv()
    hint = f"run `make setup` (or point {RUNTIME_ENV} at a venv with nvidia-pytriton==0.7.0)"
    site = sorted(venv.glob("lib/python3.*/site-packages"))
    if not site:
        raise RuntimeMissing(f"no Triton runtime virtualenv at {venv}", hint=hint)
    packages = site[-1]
    version = packages.parent.name.removeprefix("python")  # "3.11"
    root = packages / "pytriton" / "tritonserver"
    runtime = Runtime(
        venv=venv,
        server=root / "bin" / "tritonserver",
        libs=packages / "nvidia_pytriton.libs",
        python_backend=root / "backends" / "python",
        stub=root / "python_backend_stubs" / version / "triton_python_backend_stub",
    )
    for path in (runtime.server, runtime.libs, runtime.python_backend, runtime.stub):
        if not path.exists():
            raise RuntimeMissing(
                f"{venv}: the Triton runtime is incomplete ({path} is missing)", hint=hint
            )
    _check_numpy(packages)
    return runtime


#: the numpy major the wheel's Python backend stub answers with: measured 2026-11-26 with
#: bench/gpu_check.py --probe-only (docs/performance.md): with numpy 2.5.2 every Python-model
#: output of Triton 2.51 came back empty (binary_data_size 0, KIND_CPU and KIND_GPU alike); with
#: numpy 1.26.4 the same requests were answered whole. nvidia-pytriton 0.7.0 pins numpy<2.
STUB_NUMPY_MAJOR = 1


def _check_numpy(packages: Path) -> None:
    """RuntimeMissing unless the venv holds exactly one numpy, of the major the stub works with
    (read from its dist-info name: nothing is imported)."""
    found = sorted(packages.glob("numpy-*.dist-info"))
    versions = [info.name.removeprefix("numpy-").removesuffix(".dist-info") for info in found]
    pin = (
        f"{packages.parents[2]}/bin/pip install --force-reinstall 'numpy>=1.26,<2' (the "
        "runtime's pin: infra/targets/local/runtime-requirements.txt)"
    )
    if len(versions) != 1:
        raise RuntimeMissing(
            f"{packages}: the Triton runtime needs one numpy, found {versions or 'none'}",
            hint=pin,
        )
    if versions[0].split(".", 1)[0] != str(STUB_NUMPY_MAJOR):
        raise RuntimeMissing(
            f"{packages}: numpy {versions[0]} in the Triton runtime; the Python backend of "
            "Triton 2.51 answers every Python-model output empty with numpy 2",
            hint=pin,
        )


def backend_dir(runtime: Runtime, workdir: Path) -> Path:
    """A private ``--backend-directory`` whose ``python/`` links to the wheel's Python backend."""
    backends = workdir / "backends"
    python = backends / "python"
    python.mkdir(parents=True, exist_ok=True)
    links = {
        "libtriton_python.so": runtime.python_backend / "libtriton_python.so",
        "triton_python_backend_utils.py": runtime.python_backend / "triton_python_backend_utils.py",
        "triton_python_backend_stub": runtime.stub,
    }
    for name, target in links.items():
        link = python / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return backends


def fresh_dir(path: Path) -> Path:
    """``path`` emptied of what it held (0700): a Triton's own /tmp (``NS_TMP``), which only
    Tritons of its work dir ever saw."""
    shutil.rmtree(path, ignore_errors=True)
    return private_dir(path)


def free_port() -> int:
    """A port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def distinct_ports(count: int = 3, draws: int = 100) -> list[int]:
    """``count`` different free ports (Triton's HTTP, gRPC and metrics). Each ``free_port`` is
    let go before the next is asked for, so the kernel may hand the same one twice in a row;
    Triton then refuses to start ("cannot listen to GRPC requests and metrics requests at the
    same address and port": seen once in CI, 2026-12-07). TdkError after ``draws`` tries."""
    ports: list[int] = []
    for _ in range(draws):
        port = free_port()
        if port not in ports:
            ports.append(port)
        if len(ports) == count:
            return ports
    raise TdkError(
        f"no {count} different free ports on 127.0.0.1 in {draws} tries",
        hint="something on this machine takes ports fast; retry",
    )


def _die_with_parent() -> None:
    # Runs in the child before exec: Triton leads its own process group (its Python stubs join
    # it, so stop() can reap them) and gets SIGKILL if the front dies without cleaning up.
    os.setpgid(0, 0)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class TritonProcess:
    """One Triton server child: explicit model control, every listener on 127.0.0.1.

    ``restricted`` (the default): every Triton API but health and inference (``RESTRICTED_APIS``:
    the repository API's loads may carry files, i.e. code; shared-memory registration writes
    any /dev/shm file) answers 403 unless the request carries a secret drawn at each start, over
    HTTP and gRPC alike; ``repository_headers`` is what our own calls send. Triton 2.51 (the
    runtime wheel's) takes ``--http-restricted-api=<categories>:<header>=<value>`` and
    ``--grpc-restricted-protocol=...``: measured 2026-11-27 (CPU), flags in
    https://github.com/triton-inference-server/server/blob/main/docs/customization_guide/inference_protocols.md

    Triton is always started by the launcher ``netns.py`` (``isolation.Link``): the secret
    never reaches its command line, and where the kernel allows, a mount namespace gives it a
    private /dev/shm, a /tmp in ``workdir`` (``NS_TMP``) and a file system read-only but for
    ``workdir``. ``netns`` (``isolation.MODES``): "auto" or "on" also put it in a network
    namespace of its own, so no other local user can connect to it; connections are then
    opened with ``open_socket`` only (gRPC's, for loads, through the relay at ``grpc_address``:
    ``grpc_relay``), or, with ``connector`` (``tdk tune``: its load generators
    are processes of their own), from any process of this user through ``connector_of()``
    (``isolation.Connector``). What is not in place is said once, as a warning naming what it
    exposes.
    """

    def __init__(
        self,
        runtime: Runtime,
        repository: Path,
        workdir: Path,
        restricted: bool = True,
        cpus: frozenset[int] | None = None,
        netns: str = "off",
        connector: bool = False,
    ) -> None:
        self.runtime = runtime
        self.netns = netns
        #: where the launcher answers other processes of this user (None: the front only)
        self.connector_path = workdir / CONNECTOR_FILE if connector else None
        #: the link to Triton's launcher, and what it said it put in place
        self.link: isolation.Link | None = None
        #: the way to Triton's gRPC listener in a network namespace of its own
        self.relay: GrpcRelay | None = None
        self.started: isolation.Started | None = None
        self._triton_pid: int | None = None
        #: the CPUs Triton (and the backend stubs it starts, which inherit them) runs on; None: any
        self.cpus = cpus
        self.repository = repository
        self.workdir = workdir
        self.restricted = restricted
        self._secret = ""
        self.log_path = workdir / "triton.log"
        self.http_port = 0
        self.grpc_port = 0
        self.metrics_port = 0
        #: where this start's lines begin in ``log_path`` (it is appended to across restarts)
        self._log_start = 0
        self.proc: asyncio.subprocess.Process | None = None
        #: the Python backend names its /dev/shm regions with this prefix; stop() removes them
        self.shm_prefix = shm.region_prefix(os.getpid(), secrets.randbits(48))

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_address(self) -> str | None:
        """Where the front reaches Triton's gRPC listener for loads (``grpc_control``): in a
        network namespace of its own, the relay's Unix socket (``grpc_relay``; None before)."""
        if self.own_network:
            return self.relay.address if self.relay is not None else None
        return f"127.0.0.1:{self.grpc_port}" if self.grpc_port else None

    @property
    def pid(self) -> int | None:
        """Triton's own pid (in a namespace, the launcher's child)."""
        return self._triton_pid or (self.proc.pid if self.proc else None)

    def _holds(self, protection: str) -> bool:
        return self.started is not None and protection in self.started.held

    @property
    def own_network(self) -> bool:
        """Whether Triton's listeners are in a network namespace of its own."""
        return self._holds("net")

    def protect_memory(self) -> None:
        """After a model load: its Python stubs' regions on the host's /dev/shm made 0600
        (nothing to do in a mount namespace of its own: its /dev/shm is private)."""
        if not self._holds("mount"):
            shm.protect_regions(self.shm_prefix)

    def connector_of(self) -> isolation.Connector:
        """Connections to Triton for any process of this user (started with ``connector``)."""
        if self.connector_path is None:
            raise TdkError("this Triton was started without a connector", hint="a bug in tdk")
        return isolation.Connector(str(self.connector_path))

    async def open_socket(self) -> socket.socket:
        """A connected, non-blocking socket to Triton's HTTP listener."""
        if self.link is not None and self.own_network:
            return await self.link.connect()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.http_port))
        except BaseException:
            sock.close()
            raise
        return sock

    @property
    def repository_headers(self) -> tuple[tuple[str, str], ...]:
        """The header a model-repository request needs (none when unrestricted)."""
        return ((REPOSITORY_HEADER, self._secret),) if self._secret else ()

    def _restriction(self) -> list[str]:
        if not self._secret:
            return []
        rule = f"{','.join(RESTRICTED_APIS)}:{REPOSITORY_HEADER}={self._secret}"
        return [f"--http-restricted-api={rule}", f"--grpc-restricted-protocol={rule}"]

    def command(self, http: int, grpc: int, metrics: int) -> list[str]:
        backends = backend_dir(self.runtime, self.workdir)
        return [
            str(self.runtime.server),
            f"--model-repository={self.repository}",
            "--model-control-mode=explicit",
            f"--backend-directory={backends}",
            "--http-address=127.0.0.1",
            f"--http-port={http}",
            "--grpc-address=127.0.0.1",
            f"--grpc-port={grpc}",
            "--metrics-address=127.0.0.1",
            f"--metrics-port={metrics}",
            f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}",
            "--allow-sagemaker=false",
            "--allow-vertex-ai=false",
            "--allow-gpu-metrics=false",
            "--strict-readiness=false",
            "--exit-timeout-secs=5",
            "--log-verbose=0",
            *self._restriction(),
        ]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{self.runtime.bin}{os.pathsep}{env.get('PATH', '')}"
        libs = [str(self.runtime.libs), env.get("LD_LIBRARY_PATH", "")]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(part for part in libs if part)
        env["VIRTUAL_ENV"] = str(self.runtime.venv)
        # the file system may be read-only to Triton but for its work dir: temporary files there
        env["TMPDIR"] = str(self.workdir / "tmp")
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONHOME", None)
        return env

    async def start(self, timeout: float = 60.0) -> None:
        """Start Triton on fresh ports and wait until its HTTP health endpoint answers."""
        private_dir(self.workdir)
        private_dir(self.workdir / "tmp")
        shm.sweep_orphans()  # what Tritons of a killed front left
        self._secret = secrets.token_urlsafe(32) if self.restricted else ""
        for attempt in range(1, PORT_TRIES + 1):
            self.http_port, self.grpc_port, self.metrics_port = distinct_ports()
            command = self.command(self.http_port, self.grpc_port, self.metrics_port)
            self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
            await self._launch(command)
            try:
                await self._wait_live(timeout)
                break
            except _PortTaken as exc:
                await self.stop()
                if attempt == PORT_TRIES:
                    raise TdkError(
                        f"Triton lost a port to another process {PORT_TRIES} times: {exc}",
                        hint=f"see {self.log_path}; something on this machine takes ports fast",
                    ) from exc
                logger.info("Triton lost a port to another process; starting on fresh ports")
        self._hide_secret()
        self._warn_once()
        self._record()
        if self.own_network:
            self.relay = GrpcRelay(self.workdir / GRPC_RELAY_FILE, self._grpc_socket)
            try:
                await self.relay.start()
            except OSError:
                await self.stop()
                raise

    async def _grpc_socket(self) -> socket.socket:
        if self.link is None:
            raise ConnectionError("Triton has stopped")
        return await self.link.connect(isolation.GRPC)

    def _hide_secret(self) -> None:
        """Where the launcher could not keep the secret off Triton's command line: overwrite it
        there now that Triton has parsed it (its HTTP listener answers)."""
        pid = self.pid
        if not self._secret or pid is None or self._holds("argv"):
            return
        if not hide_argument(pid, self._secret):
            logger.warning(
                "could not hide the restricted APIs' secret in Triton's command line (pid "
                "%s): local users who can read /proc/%s/cmdline can load models into it",
                pid,
                pid,
            )

    def _warn_once(self) -> None:
        """One warning per process (a restarted Triton is not announced again), naming each
        protection not in place and what that exposes (README.md, 'Trust boundaries')."""
        if self.started is None:
            return
        wanted = ["mount", "tmp", "readonly", *(["argv"] if self._secret else [])]
        if self.netns != "off":
            wanted.insert(0, "net")
        exposed = self.started.exposures(wanted)
        if exposed and tuple(exposed) not in _ANNOUNCED:
            _ANNOUNCED.add(tuple(exposed))
            logger.warning(
                "Triton runs with less isolation than it could (%s): %s (README.md, 'Trust "
                "boundaries')",
                self.started.why or "refused by this machine",
                "; ".join(exposed),
            )

    async def _spawn(self, command: list[str], pass_fds: tuple[int, ...] = ()) -> None:
        with open_private(self.log_path, "ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env=self.environment(),
                cwd=str(self.workdir),
                preexec_fn=self._child_setup,
                pass_fds=pass_fds,
            )

    def _secret_args(self, command: list[str]) -> list[int]:
        return [i for i, arg in enumerate(command) if self._secret and self._secret in arg]

    async def _launch(self, command: list[str]) -> None:
        """Triton through its launcher (``netns.py``), in namespaces of its own as far as
        ``netns`` and the kernel allow; TdkError when ``netns`` is "on" and the kernel refuses
        a network namespace."""
        link, theirs = isolation.Link.pair()
        passed = [theirs]
        try:
            if self.connector_path is not None:
                passed.append(isolation.listen(self.connector_path))
            tmp = fresh_dir(self.workdir / NS_TMP)  # what a killed Triton left goes
            seen = [self.repository, self.runtime.venv]
            link.send_command(command, self._secret_args(command), [self.workdir], tmp, seen)
            connector_fd = passed[1].fileno() if len(passed) > 1 else None
            launcher = link.command(
                theirs.fileno(), self.http_port, self.netns, connector_fd, self.grpc_port
            )
            await self._spawn(launcher, tuple(sock.fileno() for sock in passed))
        finally:
            for sock in passed:  # the launcher holds them now
                sock.close()
        try:
            self.started = await link.hello(30.0)
        except isolation.NamespaceUnavailable as exc:
            link.close()
            if self.proc is not None:
                await self.proc.wait()
            self.proc = None
            raise TdkError(
                f"Triton cannot run in a network namespace of its own: {exc.message}",
                hint="allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                "or the container's seccomp profile), or pass --triton-netns auto",
            ) from exc
        self._triton_pid = self.started.pid
        self.link = link

    def _child_setup(self) -> None:
        """In the child, before Triton runs: die with us, keep what it and its stubs create
        (the Python backend's shared memory: prompts, outputs) to this user, and stay on
        ``cpus`` when given."""
        _die_with_parent()
        os.umask(0o077)
        if self.cpus is not None:
            os.sched_setaffinity(0, self.cpus)

    def _record(self) -> None:
        """``<workdir>/triton.json`` (0600): pid, ports and the repository API header, for this
        user's own tools (bench, tests); ``/tdk/status``, open to any local user, says none."""
        known: dict[str, object] = {"pid": self.pid, "http_port": self.http_port}
        known["grpc_port"] = self.grpc_port
        known["metrics_port"] = self.metrics_port
        known["netns"] = self.own_network  # its ports are inside a namespace of its own
        known["protections"] = sorted(self.started.held) if self.started else []
        known["repository_header"] = list(next(iter(self.repository_headers), ()))
        write_private(self.workdir / TRITON_FILE, json.dumps(known).encode())

    async def _wait_live(self, timeout: float) -> None:
        """Until Triton answers on HTTP and holds all three of its listeners; ``_PortTaken``
        when it exited because another process had taken one of its ports."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.returncode is not None:
                if PORT_TAKEN in self._this_start_log():
                    raise _PortTaken(self.log_tail(1))
                raise TdkError(
                    f"Triton exited while starting: {self.log_tail()}",
                    hint=f"see {self.log_path}",
                )
            if await http_ok(self.open_socket) and self._holds_its_ports():
                return
            await asyncio.sleep(0.05)
        await self.stop()
        raise TdkError(f"Triton did not start within {timeout:.0f} s", hint=f"see {self.log_path}")

    def _holds_its_ports(self) -> bool:
        """Whether the listeners on Triton's ports are its own (in a namespace of its own, no
        other process can take them; where ``/proc`` cannot tell, the HTTP answer is trusted)."""
        pid = self.pid
        if self.own_network or pid is None:
            return True
        held = listeners.holds(pid, (self.http_port, self.grpc_port, self.metrics_port))
        return held is not False

    def _this_start_log(self) -> str:
        try:
            with self.log_path.open("rb") as log:
                log.seek(self._log_start)
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    async def wait(self) -> int:
        """Wait for the process to exit; its return code."""
        assert self.proc is not None
        return await self.proc.wait()

    async def stop(self, grace: float = 10.0) -> None:
        """The gRPC relay closed; SIGTERM, then SIGKILL after ``grace`` seconds; then whatever
        is left of its process group (Python stubs) and the shared memory its Python backend
        created."""
        proc = self.proc
        if self.relay is not None:
            await self.relay.close()
            self.relay = None
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if self.link is not None:
            self.link.close()
            self.link = None
        self.started, self._triton_pid = None, None
        shm.remove_regions(self.shm_prefix)
        shutil.rmtree(self.workdir / NS_TMP, ignore_errors=True)  # Triton's /tmp: its own
        if self.connector_path is not None:
            self.connector_path.unlink(missing_ok=True)

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(text[-lines:])


async def http_ok(
    opener: Callable[[], Awaitable[socket.socket]], path: str = "/v2/health/live"
) -> bool:
    """Whether Triton answers 200 on ``path`` within two seconds, over a socket ``opener`` gives
    (the kit's own Triton, or a pod's: infra.triton_runtime.external)."""
    try:
        reader, writer = await asyncio.open_connection(sock=await opener())
    except OSError:
        return False
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        status = await asyncio.wait_for(reader.readline(), 2.0)
        return b" 200 " in status
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
