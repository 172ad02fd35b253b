"""What one ``tdk bench`` asks for, as given: the load (``LoadRequest``, made into a checked
``Load`` by ``tensor_load`` before any target is opened) and what a tensor bench sends
(``BenchRequest``). A generate bench's request is ``infra.perf.bench.genrequest``'s.

The command builds them explicitly from its option groups (``cli/bench.py``: the help texts)
and hands them to ``infra.perf.bench.session``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from infra.clients.deadline import DEFAULT_TIMEOUT_S
from infra.perf.bench.loadgen import DEFAULT_CONCURRENCY, Stability
from infra.perf.bench.measure import Load
from tdk.errors import UsageError

LOAD = Load()  # where the defaults are declared
#: the sweep when --concurrency is not given: tune's too (infra.perf.bench.loadgen)
DEFAULT_LEVELS = ",".join(str(n) for n in DEFAULT_CONCURRENCY)


class Arrival(StrEnum):
    constant = "constant"
    poisson = "poisson"


@dataclass(frozen=True)
class LoadRequest:
    """The load a bench asks for, as given (``None``: the default applies): closed-loop client
    counts (``concurrency``, comma-separated) or an open-loop ``rate``, its arrivals, the
    window and when a level is stable."""

    concurrency: str | None = None
    rate: float | None = None
    arrival: Arrival = Arrival.constant
    duration: float | None = None
    stability: float = LOAD.stability.percentage
    max_windows: int = LOAD.stability.max_windows


@dataclass(frozen=True)
class BenchRequest:
    """What one tensor bench sends to ``target_model`` and how: example inputs at ``batch`` (or
    the ``samples`` directory's requests), each tensor in ``inputs`` / ``text`` replacing its
    own; recorded as running on ``instance_type`` / ``gpu`` for ``tdk plan``."""

    target_model: str
    load: LoadRequest = LoadRequest()
    inputs: tuple[str, ...] = ()
    text: str | None = None
    batch: int = 1
    samples: Path | None = None
    grpc: bool = False
    json_body: bool = False
    processes: int = 1
    timeout: float = DEFAULT_TIMEOUT_S
    instance_type: str | None = None
    gpu: str | None = None


def levels(text: str) -> tuple[int, ...]:
    """``--concurrency``: comma-separated positive client counts."""
    try:
        found = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        found = ()
    if not found or min(found) < 1:
        raise UsageError(
            f"--concurrency {text!r}: expected positive integers", hint="e.g. -c 1,4,16"
        )
    return found


def tensor_load(request: LoadRequest) -> Load:
    """The closed-loop levels or the open-loop rate, each window until stable (checked)."""
    steady = Stability(request.stability, request.max_windows)
    steady.check()
    sweep = levels(DEFAULT_LEVELS if request.concurrency is None else request.concurrency)
    window_s = LOAD.duration_s if request.duration is None else request.duration
    return Load(sweep, request.rate, request.arrival is Arrival.poisson, window_s, steady)
