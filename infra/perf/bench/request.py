"""What one ``tdk bench`` asks for: the command's options, as given, in one frozen value, and
the load it describes (``tensor_load``, ``levels``), checked before any target is opened.

The command builds it once from its options (``cli/bench.py``: the help texts and defaults)
and hands it to ``infra.perf.bench.session`` and the generate bench.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

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
class BenchRequest:
    """``tdk bench``'s options by name, as given (``None``: not given, the default applies);
    ``target`` is ``--target``'s name (the located target may be the stack's)."""

    target_model: str
    target: str | None
    endpoint: str | None
    concurrency: str | None
    rate: float | None
    arrival: Arrival
    duration: float | None
    stability: float
    max_windows: int
    processes: int
    batch: int
    inputs: list[str] | None
    text: str | None
    store: str | None
    url: str | None
    stack: str | None
    stack_outputs: Path | None
    project_dir: Path
    grpc: bool
    json_body: bool
    region: str | None
    endpoint_url: str | None
    instance_type: str | None
    gpu: str | None
    timeout: float
    json: bool
    example: bool
    samples: Path | None
    prompt: str | None
    prompts: Path | None
    requests: int
    max_tokens: int
    goodput: str | None
    csv: Path | None

    @property
    def generates(self) -> bool:
        """A generate bench (``--prompt``/``--prompts``): streamed text, not tensors."""
        return self.prompt is not None or self.prompts is not None


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


def tensor_load(request: BenchRequest) -> Load:
    """The closed-loop levels or the open-loop rate, each window until stable (checked)."""
    steady = Stability(request.stability, request.max_windows)
    steady.check()
    sweep = levels(DEFAULT_LEVELS if request.concurrency is None else request.concurrency)
    window_s = LOAD.duration_s if request.duration is None else request.duration
    return Load(sweep, request.rate, request.arrival is Arrival.poisson, window_s, steady)
