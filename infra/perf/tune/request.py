"""What one ``tdk tune`` asks for: the command's options, as given, in one frozen value.

The command builds it once from its options and hands it on; the defaults and help texts stay
with the options (``cli/tune.py``), the checks with the code that turns it into ``Settings`` and
a ``Space``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
