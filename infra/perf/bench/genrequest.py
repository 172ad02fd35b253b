"""What a generate bench (``tdk bench generate``) asks for, as given, and
its parsing: the prompts, AIPerf's goodput SLOs, one load per level, and AIPerf's CSV layout of
the records (``infra.perf.bench.genbench`` measures)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infra.perf.bench.genbench import GenLoad
from infra.perf.bench.request import Arrival, LoadRequest, levels
from tdk.bounded import read_bounded
from tdk.errors import UsageError

DEFAULT_REQUESTS = 20
DEFAULT_MAX_TOKENS = 16
PROMPTS_MAX_BYTES = 64 * 1024 * 1024  # prompts are held in memory, all of them


@dataclass(frozen=True)
class GenRequest:
    """A generate bench's options as given: ``prompt`` or the lines of ``prompts``, how many
    ``requests`` in all, ``max_tokens`` each, AIPerf ``goodput`` SLOs as written, a ``csv``
    path for the metrics."""

    prompt: str | None = None
    prompts: Path | None = None
    requests: int = DEFAULT_REQUESTS
    max_tokens: int = DEFAULT_MAX_TOKENS
    goodput: str | None = None
    csv: Path | None = None

    @property
    def generates(self) -> bool:
        """A generate bench (a prompt or prompts given): streamed text, not tensors."""
        return self.prompt is not None or self.prompts is not None


def gen_loads(request: GenRequest, load: LoadRequest) -> list[GenLoad]:
    """One closed loop per -c level (default 1), or one open loop at --rate."""
    clients = (
        (1,) if load.concurrency is None or load.rate is not None else levels(load.concurrency)
    )
    texts = read_prompts(request.prompt, request.prompts)
    poisson = load.arrival is Arrival.poisson
    return [
        open_loop_load(GenLoad(texts, request.requests, n, load.rate), poisson, load.duration)
        for n in clients
    ]


def read_prompts(prompt: str | None, prompts: Path | None) -> tuple[str, ...]:
    """``--prompt`` or the non-empty lines of ``--prompts`` (exactly one of them)."""
    if prompt is not None and prompts is not None:
        raise UsageError("--prompt and --prompts exclude each other", hint="pass one of them")
    if prompts is None:
        return (prompt,) if prompt else ()
    hint = "give a UTF-8 text file with one prompt per line"
    try:  # a regular file only (a FIFO would block, /dev/zero never end), capped
        lines = read_bounded(prompts, PROMPTS_MAX_BYTES).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"--prompts {prompts}: cannot read it ({why})", hint=hint) from None
    found = tuple(line for line in lines if line.strip())
    if not found:
        raise UsageError(f"--prompts {prompts}: no prompt in it", hint="one prompt per line")
    return found


def parse_goodput(text: str | None) -> dict[str, float] | None:
    """``--goodput "name:value ..."`` as AIPerf writes it (None: not asked)."""
    import math

    from infra.perf.bench.genbench import GOODPUT_METRICS

    if text is None:
        return None
    slos: dict[str, float] = {}
    for part in text.split():
        name, _, value = part.partition(":")
        try:
            limit = float(value)
        except ValueError:
            limit = math.nan
        if name not in GOODPUT_METRICS or not math.isfinite(limit) or limit <= 0:
            raise UsageError(
                f"--goodput {part!r}: expected METRIC:VALUE with a value above 0, METRIC one "
                f"of {', '.join(GOODPUT_METRICS)}",
                hint='e.g. --goodput "time_to_first_token:100 inter_token_latency:3.4"',
            )
        slos[name] = limit
    if not slos:
        raise UsageError("--goodput names no SLO", hint="e.g. --goodput time_to_first_token:100")
    return slos


def open_loop_load(load: GenLoad, poisson: bool, deadline_s: float | None) -> GenLoad:
    """``load`` with ``--arrival`` and ``--duration`` (its deadline), which only an open loop
    (``--rate``) uses."""
    if load.rate is None:
        if poisson or deadline_s is not None:
            given = "--arrival poisson" if poisson else "--duration"
            raise UsageError(
                f"{given} applies to an open loop; a --prompt bench without --rate is closed "
                f"(-c {load.concurrency}, --requests {load.requests})",
                hint="add --rate R (requests per second), or drop " + given,
            )
        return load
    if load.rate <= 0:
        raise UsageError(f"--rate {load.rate:g}: must be above 0", hint="e.g. --rate 2")
    return replace(load, poisson=poisson, deadline_s=deadline_s)


def write_csv(path: Path, records: list[dict[str, Any]]) -> None:
    """AIPerf's CSV layout: one row per level and metric, its statistics as columns; then the
    throughputs (``value``)."""
    import csv
    import io

    from infra.perf.bench.genbench import STATS

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["mode", "level", "metric", *STATS, "value"])
    for record in records:
        for name, value in record["metrics"].items():
            if isinstance(value, dict):
                row = [value[s] for s in STATS]
                writer.writerow([record["mode"], record["level"], name, *row, ""])
            else:
                writer.writerow([record["mode"], record["level"], name, *[""] * len(STATS), value])
    try:
        path.write_text(buffer.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--csv {path}: cannot write it ({exc.strerror or exc})",
                         hint="choose a writable path") from None  # fmt: skip
