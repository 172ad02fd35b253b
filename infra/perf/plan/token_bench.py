"""What ``tdk bench generate --json`` measured, read for ``tdk plan``: one load level's record,
or ``{"runs": [...]}`` (several levels in one run).

A level is picked as for requests (``infra.perf.plan.measurement.usable``): the highest output token
throughput among the error-free levels whose **p99 time to first token** (AIPerf's
``time_to_first_token``) meets ``--latency-budget-ms``. The budget applies to TTFT, not to
AIPerf's request latency (e2e), because e2e grows with the number of tokens a prompt asks for:
the same unit meets a 2 s e2e budget at 50 output tokens and misses it at 500. A constraint on
e2e or inter-token latency belongs in ``tdk bench --goodput`` (docs/streaming.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from infra.perf.plan.measurement import read_bench_json, usable
from infra.planning.report import MAX_RATE, MIN_RATE
from tdk.errors import UsageError
from tdk.numbers import check_number, decimal_of

#: the statistic ``--latency-budget-ms`` bounds on a token measurement, as messages name it
BUDGETED = "p99 time to first token"
_HINT = "save `tdk bench generate --prompt ... --instance-type TYPE --json > FILE` again"


@dataclass(frozen=True)
class TokenMeasurement:
    """One load level ``tdk bench generate`` measured on one serving unit."""

    source: str
    target: str
    instance_type: str | None
    gpu: str | None
    model: str
    output_tokens_per_s: Decimal
    offered_rate: float | None = None  # bench --rate: the load it was given, not its capacity
    #: input tokens per output token (prompt words: bench's input_sequence_length), None: unknown
    input_ratio: Decimal | None = None
    errors: int = 0
    ttft_p99_ms: Decimal | None = None
    #: output tokens per successful request (the measured sequence lengths), None: unknown
    tokens_per_request: Decimal | None = None
    level: str = ""  # "concurrency 4", "rate 2.5": which level of the run this is

    @property
    def latency_ms(self) -> Decimal | None:
        return self.ttft_p99_ms

    @property
    def rate(self) -> Decimal:
        return self.output_tokens_per_s

    def load_note(self) -> str | None:
        """Said when the throughput is what an offered rate asked for, not what the unit can
        serve: the cost per token is then at that load (too high if the unit had room)."""
        if self.offered_rate is None:
            return None
        return (
            f"{self.source} was measured at an offered rate of {self.offered_rate:g} requests/s "
            "(bench --rate): its tokens/s are what that load asked for, not what the unit can "
            "serve, so the cost per million tokens is at that load; bench with --concurrency "
            "to price the unit's capacity"
        )


@dataclass(frozen=True)
class TokenBench:
    """Every level of one ``bench generate`` run."""

    source: str
    levels: tuple[TokenMeasurement, ...]

    def capacity(self, budget_ms: Decimal | None) -> TokenMeasurement:
        """The level to plan with: the only one when no budget is given (refused when it had
        failures), else the best one within the budget (``usable``, as for requests)."""
        if budget_ms is None and len(self.levels) == 1:
            level = self.levels[0]
            if level.errors:
                raise UsageError(
                    f"{self.source}: the bench had {level.errors} failed requests; its "
                    "throughput is not a capacity",
                    hint=_HINT,
                )
            return level
        return usable(self.source, self.levels, budget_ms, BUDGETED)


def token_bench(path: Path, data: Any) -> TokenBench | None:
    """The token measurement in ``data`` (a parsed JSON document), None when it is not one."""
    records = data.get("runs") if isinstance(data, dict) else None
    if isinstance(records, list) and records and all(_is_level(r) for r in records):
        levels = (_level(r, f"{path}: runs[{i}]", path) for i, r in enumerate(records))
        return TokenBench(str(path), tuple(levels))
    if not isinstance(data, dict) or "output_tokens_per_s" not in data:
        return None
    return TokenBench(str(path), (_level(data, str(path), path),))


def _is_level(record: Any) -> bool:
    return isinstance(record, dict) and "output_tokens_per_s" in record


def _level(data: dict[str, Any], where: str, path: Path) -> TokenMeasurement:
    errors = data.get("errors")
    if isinstance(errors, bool) or not isinstance(errors, int) or errors < 0:
        raise UsageError(f"{where}: errors {errors!r} is not a count of failed requests",
                         hint=_HINT)  # fmt: skip
    # a level with failures is never planned with: its rate may be 0, the others' may not
    low = MIN_RATE if errors == 0 else 0
    rate = decimal_of(data["output_tokens_per_s"], f"{where}: output_tokens_per_s", low,
                      MAX_RATE, hint=_HINT)  # fmt: skip
    return TokenMeasurement(
        str(path),
        str(data.get("target", "")),
        data.get("instance_type"),
        data.get("gpu"),
        str(data.get("model", "")),
        rate,
        _offered_rate(data),
        _input_ratio(data),
        errors,
        _ttft_p99(data, where),
        _per_request(data),
        f"{data.get('mode', 'concurrency')} {data.get('level', '?')}",
    )


def _ttft_p99(data: dict[str, Any], where: str) -> Decimal | None:
    ttft = data.get("ttft_ms")
    value = ttft.get("p99") if isinstance(ttft, dict) else None
    if value is None:
        return None
    number = check_number(value, f"{where}: ttft_ms.p99", 0, 1e12, hint=_HINT)
    return Decimal(str(number))


def _counts(data: dict[str, Any]) -> tuple[float, float] | None:
    """(successful requests, output tokens), when the bench recorded both as finite numbers."""
    found: list[float] = []
    for value in (data.get("ok"), data.get("output_tokens")):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if not math.isfinite(value) or value <= 0:
            return None
        found.append(float(value))
    return found[0], found[1]


def _per_request(data: dict[str, Any]) -> Decimal | None:
    """Output tokens per successful request: what one request of ``--peak-rps`` costs."""
    counts = _counts(data)
    if counts is None:
        return None
    return Decimal(str(counts[1])) / Decimal(str(counts[0]))


def _input_ratio(data: dict[str, Any]) -> Decimal | None:
    """Input tokens per output token: the average prompt length (``input_sequence_length``,
    counted as the bench says) times requests over output tokens; None for an older bench."""
    metrics = data.get("metrics")
    isl = metrics.get("input_sequence_length") if isinstance(metrics, dict) else None
    avg = isl.get("avg") if isinstance(isl, dict) else None
    counts = _counts(data)
    if counts is None or not isinstance(avg, int | float) or not math.isfinite(avg):
        return None
    return Decimal(str(avg)) * Decimal(str(counts[0])) / Decimal(str(counts[1]))


def _offered_rate(data: dict[str, Any]) -> float | None:
    level = data.get("level")
    if data.get("mode") != "rate" or not isinstance(level, int | float):
        return None
    return float(level)


def load_token_bench(path: Path) -> TokenBench | None:
    """``path``'s token measurement; None when the file is another kind of measurement."""
    try:
        data = read_bench_json(path)
    except UsageError:
        return None  # the request-measurement reader reports what is wrong with the file
    return token_bench(path, data)
