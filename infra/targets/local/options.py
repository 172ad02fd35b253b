"""How one local endpoint runs: every option declared once, with its default, flag and help.

``tdk local up``, ``python -m infra.targets.local.serve`` (what ``--detach`` starts) and the
model manager all read this one dataclass; the background child gets it as argv built from the
same field list (``to_argv`` / ``from_argv``), so no option is declared twice.
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from infra.triton_runtime.isolation import MODES as NETNS_MODES
from infra.triton_runtime.private import state_dir
from tdk.errors import UsageError

SAGEMAKER_PAYLOAD_LIMIT = 6 * 1024 * 1024  # InvokeEndpoint's request body limit
SAGEMAKER_INVOCATION_TIMEOUT = 60.0  # seconds a SageMaker container has to answer
# SageMaker's EndpointName rule (CreateEndpoint / InvokeEndpoint): 1-63 characters.
ENDPOINT_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")

#: a pod's front (`tdk front serve`) keeps room for one more model: a cold request then waits
#: for its own download and load, not for another model's unload first. Triton's unload of a
#: Python-backend model takes over a second whatever the model: the instance's destructor first
#: sleeps 1 s for the stub to report its health (``StubLauncher::UpdateHealth``, src/
#: stub_launcher.cc and src/python_be.cc of triton-inference-server/python_backend, main read
#: 2026-12-07), then waits for the stub's exit; measured 1.03-1.33 s each on an idle 2-core
#: machine with the runtime wheel's Triton 2.51, six at once ending within 1.25 s; see
#: docs/kubernetes.md
POD_HEADROOM_MODELS = 1
#: and up to four when cold loads come faster than Triton finishes unloads: the room a pod
#: keeps grows to the cold loads expected during one unload (``capacity.wanted_headroom``)
POD_HEADROOM_MAX_MODELS = 4

#: the longest a local endpoint timeout may be (a day): every wait keeps a deadline
MAX_TIMEOUT_S = 86_400.0


def _opt(flag: str, help: str, default: Any = MISSING, kind: type = str) -> Any:
    return field(default=default, metadata={"flag": flag, "help": help, "type": kind})


@dataclass(frozen=True)
class EndpointOptions:
    """One local endpoint's settings; invalid values raise UsageError naming the flag."""

    release: str = _opt("--release", "Release URL written by `tdk package --release`.")
    name: str = _opt("--name", "Endpoint name clients put in the URL (SageMaker's rule).", "local")
    port: int = _opt("--port", "Port on 127.0.0.1 (0 picks a free one).", 8080, int)
    max_loaded: int = _opt(
        "--max-loaded-models", "Models kept loaded; beyond, LRU unloads.", 8, int
    )
    cache_bytes: int = _opt(
        "--cache-bytes", "Disk cache bound for extracted models (bytes).", 20 * 1024**3, int
    )
    max_body: int = _opt(
        "--max-body-bytes",
        "Request body limit (SageMaker real-time: 6 MB).",
        SAGEMAKER_PAYLOAD_LIMIT,
        int,
    )
    body_timeout: float = _opt(
        "--body-timeout",
        "Seconds a client has to send its whole request body.",
        SAGEMAKER_INVOCATION_TIMEOUT,
        float,
    )
    invocation_timeout: float = _opt(
        "--invocation-timeout",
        "Seconds the model has to answer (SageMaker: 60).",
        SAGEMAKER_INVOCATION_TIMEOUT,
        float,
    )
    capacity_timeout: float = _opt(
        "--capacity-timeout", "Seconds a request waits for a model slot.", 60.0, float
    )
    min_residency: float = _opt(
        "--min-residency", "Seconds a busy model stays loaded before it may be swapped.", 2.0, float
    )
    headroom_models: int = _opt(
        "--headroom-models",
        "Models' worth of room kept free for the next load: once fewer are free, the least "
        "recently used idle models unload in the background, so a cold request need not wait "
        "for an unload (at the cost of that many loaded models).",
        0,
        int,
    )
    headroom_max: int = _opt(
        "--headroom-max-models",
        "The most models' worth of room kept free: above --headroom-models, the room grows to "
        "the cold loads expected while one unload finishes (their rate times the measured "
        "unload time); 0: always --headroom-models.",
        0,
        int,
    )
    keep_alive: float = _opt(
        "--keep-alive-timeout", "Seconds an idle client connection is kept open.", 5.0, float
    )
    header_timeout: float = _opt(
        "--header-timeout",
        "Seconds a client has to send a request's line and headers.",
        10.0,
        float,
    )
    max_connections: int = _opt(
        "--max-connections",
        "Client connections held at once; beyond, new ones are closed.",
        256,
        int,
    )
    max_client_connections: int = _opt(
        "--max-client-connections",
        "Connections one client (another local user, or a remote address) may hold at once; "
        "beyond, its new ones are closed (others are still served). You are not limited.",
        64,
        int,
    )
    workdir: str | None = _opt("--workdir", "Work directory (default: in the state dir).", None)
    store_endpoint_url: str | None = _opt(
        "--store-endpoint-url", "S3-compatible endpoint for s3:// stores.", None
    )
    triton_url: str | None = _opt(
        "--triton-url",
        "Triton run by someone else (a pod's second container), e.g. http://127.0.0.1:8000: the "
        "front loads models into its --model-dir and never starts a Triton of its own.",
        None,
    )
    model_dir: str | None = _opt(
        "--model-dir", "The external Triton's --model-repository (with --triton-url).", None
    )
    triton_grpc: str | None = _opt(
        "--triton-grpc",
        "The external Triton's gRPC listener, HOST:PORT (with --triton-url; a pod's: "
        "127.0.0.1:8001): models load through it, so a load never holds the HTTP thread that "
        "inference requests wait on. Unset: loads go over HTTP.",
        None,
    )
    memory_budget: int = _opt(
        "--memory-budget-bytes",
        "Memory the loaded models may take (0: no budget); beyond it LRU idle models unload.",
        0,
        int,
    )
    host: str = _opt(
        "--host", "Address to listen on (a pod's front: 0.0.0.0; tdk local: loopback).", "127.0.0.1"
    )
    triton_netns: str = _opt(
        "--triton-netns",
        "Triton in a network namespace of its own, unreachable by other local users: auto "
        "(where the kernel allows; else a warning), on (refuse to start without), off.",
        "auto",
    )

    def __post_init__(self) -> None:
        check_name(self.name)
        if not 0 <= self.port <= 65535:
            raise UsageError(
                f"--port {self.port} is not a TCP port", hint="use 1-65535, or 0 for a free port"
            )
        if not self.release:
            raise UsageError(
                "--release is empty", hint="pass the release URL (file://, s3://, gs://, az://)"
            )
        counts = ("max_loaded", "cache_bytes", "max_body", "max_connections")
        for name in (*counts, "max_client_connections"):
            self._positive(name, int(getattr(self, name)))
        for name in ("body_timeout", "invocation_timeout", "capacity_timeout", "keep_alive"):
            self._positive(name, float(getattr(self, name)), MAX_TIMEOUT_S)
        self._positive("header_timeout", self.header_timeout, MAX_TIMEOUT_S)
        if self.triton_netns not in NETNS_MODES:
            raise UsageError(
                f"--triton-netns {self.triton_netns!r} is not one of {', '.join(NETNS_MODES)}",
                hint="e.g. --triton-netns auto",
            )
        if self.memory_budget < 0:
            raise UsageError(
                f"--memory-budget-bytes {self.memory_budget} is negative",
                hint="pass the bytes the loaded models may take, or 0 for no budget",
            )
        if (self.triton_url is None) != (self.model_dir is None):
            raise UsageError(
                "--triton-url and --model-dir go together",
                hint="pass both (a Triton of the pod and its --model-repository), or neither",
            )
        if self.triton_grpc is not None:
            self._check_grpc(self.triton_grpc)
        if self.headroom_models < 0:
            raise UsageError(
                f"--headroom-models {self.headroom_models} is negative",
                hint="e.g. --headroom-models 1 (0: unload only when a load needs the room)",
            )
        if self.headroom_max and self.headroom_max < self.headroom_models:
            raise UsageError(
                f"--headroom-max-models {self.headroom_max} is below --headroom-models "
                f"{self.headroom_models}",
                hint=f"e.g. --headroom-max-models {self.headroom_models + 3} (0: a fixed room)",
            )
        if self.min_residency < 0:
            raise UsageError("--min-residency must be >= 0", hint="e.g. --min-residency 2")

    def _check_grpc(self, address: str) -> None:
        if self.triton_url is None:
            raise UsageError(
                "--triton-grpc needs --triton-url",
                hint="a Triton the front starts itself is loaded over its own gRPC port",
            )
        host, _, port = address.rpartition(":")
        if not host.strip("[]") or not port.isdigit() or not 0 < int(port) <= 65535:
            raise UsageError(
                f"--triton-grpc {address!r} is not HOST:PORT",
                hint="e.g. --triton-grpc 127.0.0.1:8001 (Triton's gRPC port in the pod)",
            )

    def _positive(self, name: str, value: float, high: float | None = None) -> None:
        """Refuse a value <= 0, NaN, infinite, or over ``high`` (a timeout of ``inf`` turned
        the slow-client deadline off)."""
        if not (math.isfinite(value) and value > 0) or (high is not None and value > high):
            flag = flag_of(name)
            most = f" and at most {high:g}" if high is not None else ""
            raise UsageError(
                f"{flag} {value} must be a finite number > 0{most}",
                hint=f"e.g. {flag} {default_of(name)}",
            )

    @property
    def workdir_path(self) -> Path:
        """Where the endpoint keeps its repository, staging area and Triton log."""
        if self.workdir:
            return Path(self.workdir).expanduser()
        return state_dir() / f"local-{self.name}"

    def to_argv(self) -> list[str]:
        """The flags that reproduce these options (defaults left out)."""
        argv: list[str] = []
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None and (item.default is MISSING or value != item.default):
                argv += [item.metadata["flag"], str(value)]
        return argv

    @classmethod
    def parser(cls, prog: str) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=prog)
        for item in fields(cls):
            meta = item.metadata
            required = item.default is MISSING
            parser.add_argument(
                meta["flag"],
                dest=item.name,
                type=meta["type"],
                required=required,
                default=None if required else item.default,
                help=meta["help"],
            )
        return parser

    @classmethod
    def from_argv(cls, argv: Sequence[str], prog: str = "tdk-local") -> tuple[EndpointOptions, Any]:
        """Options from ``argv`` plus argparse's namespace for extra arguments of the caller."""
        parser = cls.parser(prog)
        parser.add_argument("--log", default=None)
        parser.add_argument("--lock-fd", type=int, default=None, help=argparse.SUPPRESS)
        ns = parser.parse_args(list(argv))
        values = {item.name: getattr(ns, item.name) for item in fields(cls)}
        return cls(**values), ns


def default_of(name: str) -> Any:
    """The declared default of one option (what the CLI shows)."""
    for item in fields(EndpointOptions):
        if item.name == name:
            return item.default
    raise KeyError(name)


def flag_of(name: str) -> str:
    for item in fields(EndpointOptions):
        if item.name == name:
            return str(item.metadata["flag"])
    raise KeyError(name)


def help_of(name: str) -> str:
    for item in fields(EndpointOptions):
        if item.name == name:
            return str(item.metadata["help"])
    raise KeyError(name)


def check_name(name: str) -> str:
    """``name`` when it is a valid endpoint name (status/down/invoke look files up by it)."""
    if not ENDPOINT_NAME.fullmatch(name):
        raise UsageError(
            f"--endpoint {name!r} is not a valid endpoint name",
            hint="use 1-63 letters, digits and inner hyphens (SageMaker's endpoint-name rule), "
            "e.g. --endpoint my-endpoint",
        )
    return name


def local_command(verb: str, name: str, *args: str) -> str:
    """``tdk local VERB [--endpoint NAME] ARGS`` as it pastes (quoted; the endpoint named when
    it is not the default), for hints about the endpoint ``name``."""
    named = [] if name == default_of("name") else ["--endpoint", name]
    return shlex.join(["tdk", "local", verb, *named, *args])
