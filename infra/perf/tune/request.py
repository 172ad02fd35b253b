"""What one ``tdk tune`` asks for: the command's options, as given, in one frozen value, and
the checks that turn it into what the search measures (``settings_and_space``).

The command builds it once from its options and hands it to ``infra.perf.tune.session``; the
help texts stay with the options (``cli/tune.py``), the defaults in ``Settings`` and ``Space``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from infra.perf.tune.search import Settings
from infra.perf.tune.space import Space
from tdk.errors import UsageError

MAX_REPEATS = 20  # each repeat is one more point: a bound on what a typo can cost
SPACE, SETTINGS = Space(), Settings(budget_ms=0)  # where the defaults are declared


@dataclass(frozen=True)
class TuneRequest:
    """``tdk tune``'s options by name (``None``: not given, the default applies)."""

    model_dir: Path | None
    latency_budget_ms: float | None
    search: str
    concurrency: str | None
    duration: float | None
    instances: str | None
    max_batch_sizes: str | None
    queue_delays: str | None
    out_dir: Path | None
    write: bool
    accelerators: str
    url: str | None
    model: str | None
    metrics_url: str | None
    header_file: Path | None
    plot: Path | None
    stability: float | None
    max_windows: int | None
    processes: int | None
    repeats: int | None
    pairs: int | None
    server_cpus: str
    client_cpus: str
    restore: bool
    inputs: tuple[str, ...]
    samples: Path | None
    json: bool


def settings_and_space(request: TuneRequest) -> tuple[Settings, Space]:
    """The options turned into what the search measures, each checked (a usage error names it)."""
    from infra.perf.bench.placement import resolve

    r = request
    settings, space = _options(r.latency_budget_ms, r.search, r.concurrency, r.duration)
    settings = _measuring(settings, r.stability, r.max_windows, r.processes)
    settings = _repeating(settings, r.repeats, r.pairs)
    placement = resolve(r.server_cpus, r.client_cpus, local=r.url is None)
    settings = replace(settings, placement=placement, inputs=r.inputs, samples=r.samples)
    space = _space(space, r.instances, r.max_batch_sizes, r.queue_delays)
    return settings, _accelerators(space, r.accelerators)


def _accelerators(space: Space, accelerators: str) -> Space:
    if accelerators == "auto":
        return space
    from infra.perf.tune.accel import is_option

    chosen = [a.strip() for a in accelerators.split(",") if a.strip() not in ("", "none")]
    for option in chosen:
        if not is_option(option):
            raise UsageError(
                f"--accelerators: unknown option {option!r}",
                hint="auto, none, or some of trt-fp16,trt-fp32,openvino,threads-N",
            )
    return replace(space, accelerators=("", *chosen), auto_accelerators=False)


def _options(
    budget: float | None, search: str, concurrency: str | None, duration: float | None
) -> tuple[Settings, Space]:
    if budget is None:
        raise UsageError("--latency-budget-ms is required", hint="e.g. --latency-budget-ms 50")
    if not 0 < budget < float("inf"):
        raise UsageError(f"--latency-budget-ms {budget:g}: expected a number > 0", hint="e.g. 50")
    if search not in ("quick", "full"):
        raise UsageError(f"--search {search!r}: expected quick or full", hint="--search quick")
    settings = Settings(budget)  # the defaults live in Settings and Space
    if concurrency is not None:
        settings = replace(settings, concurrency=_ints("--concurrency", concurrency, 1))
    if duration is not None:
        settings = replace(settings, duration_s=duration)
    return settings, SPACE


def _measuring(
    settings: Settings, stability: float | None, windows: int | None, processes: int | None
) -> Settings:
    if stability is not None:
        settings = replace(settings, stability=replace(settings.stability, percentage=stability))
    if windows is not None:
        settings = replace(settings, stability=replace(settings.stability, max_windows=windows))
    settings.stability.check()
    if processes is not None:
        if processes < 1:
            raise UsageError(f"--processes {processes}: expected >= 1", hint="e.g. --processes 4")
        settings = replace(settings, processes=processes)
    return settings


def _repeating(settings: Settings, repeats: int | None, pairs: int | None) -> Settings:
    for option, value in (("--repeats", repeats), ("--pairs", pairs)):
        if value is not None and not 0 <= value <= MAX_REPEATS:
            raise UsageError(
                f"{option} {value}: expected 0 to {MAX_REPEATS}", hint=f"e.g. {option} 3"
            )
    if repeats is not None:
        settings = replace(settings, repeats=repeats)
    return settings if pairs is None else replace(settings, pairs=pairs)


def _space(
    space: Space, instances: str | None, max_batch_sizes: str | None, queue_delays: str | None
) -> Space:
    if instances is not None:
        space = replace(space, instances=_ints("--instances", instances, 1))
    if max_batch_sizes is not None:
        space = replace(space, max_batch_size=_ints("--max-batch-sizes", max_batch_sizes, 1))
    if queue_delays is not None:
        delays = _ints("--queue-delays-us", queue_delays, 0)
        space = replace(space, max_queue_delay_us=delays, shipped_delay=False)
    return space


def _ints(option: str, text: str, minimum: int) -> tuple[int, ...]:
    try:
        values = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        values = ()
    if not values or values[0] < minimum:
        raise UsageError(
            f"{option} {text!r}: expected comma-separated integers >= {minimum}",
            hint=f"e.g. {option} 1,2,4",
        )
    return values
