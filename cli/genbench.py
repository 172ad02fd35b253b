"""``tdk bench --prompt TEXT | --prompts FILE``: streamed generate requests against an LLM, with
TTFT, TPOT, e2e latency, output tokens/s and errors (``infra.perf.genbench``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.output import Output
from infra.perf.genbench import GenLoad
from tdk.bounded import read_bounded
from tdk.errors import UsageError

if TYPE_CHECKING:
    from cli.locate import TargetName
    from infra.clients.generate import Generator
    from infra.targets.operations import Locator

PromptsOpt = Annotated[
    Path | None,
    typer.Option("--prompts", help="Generate from these prompts, one per line, used in turn."),
]
RequestsOpt = Annotated[
    int, typer.Option("--requests", min=1, help="With --prompt/--prompts: requests in all.")
]
DEFAULT_REQUESTS = 20
PROMPTS_MAX_BYTES = 64 * 1024 * 1024  # prompts are held in memory, all of them


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


def one_level(levels: tuple[int, ...]) -> int:
    """The single concurrency a generate bench runs at."""
    if len(levels) != 1:
        raise UsageError(
            f"--concurrency {','.join(map(str, levels))}: a generate bench runs one level",
            hint="pass one client count, e.g. -c 4 (or --rate R)",
        )
    return levels[0]


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


def bench_prompts(
    out: Output,
    target: TargetName,
    where: Locator,
    stores: tuple[str | None, str | None],
    target_model: str,
    timeout: float,
    load: GenLoad,
    max_tokens: int,
    runs_on: tuple[str | None, str | None] = (None, None),
) -> None:
    """Resolve the model in the release (``stores``: --store, --s3-endpoint-url), then bench;
    ``runs_on`` (--instance-type, --gpu) is recorded for ``tdk plan``."""
    from cli.invoke import generate_client, resolve_model, target_manifest

    model = resolve_model(target_manifest(target, where, *stores), target_model)
    client = generate_client(target, where, model, timeout)
    recorded = {"target": target.value, "instance_type": runs_on[0], "gpu": runs_on[1]}
    bench_generate(out, client, load, max_tokens, recorded)


def bench_generate(
    out: Output,
    client: Generator,
    load: GenLoad,
    max_tokens: int,
    recorded: dict[str, str | None] | None = None,
) -> None:
    """Run the load and print the metrics (a table, or the --json document)."""
    from infra.perf.genbench import run_genbench

    with out.progress() as start:
        advance = start(f"bench {client.model}", load.requests)
        record = run_genbench(lambda p: client.generate(p, max_tokens, True), load, advance)
    record.update(recorded or {}, model=client.model, max_tokens=max_tokens)
    if out.json_mode:
        out.json(record)
        return
    _table(out, record)


def _table(out: Output, record: dict[str, Any]) -> None:
    rows = [
        (name, *(_ms(record[key][q]) for q in ("p50", "p90", "p99")))
        for name, key in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"), ("e2e", "e2e_ms"))
    ]
    arrival = f", {record['arrival']} arrivals" if record.get("arrival") else ""
    title = (
        f"tdk bench {record['model']} ({record['mode']} {record['level']}{arrival}): "
        f"{record['output_tokens_per_s']} output tokens/s, {record['requests_per_s']} req/s, "
        f"{record['errors']} errors"
    )
    out.table(title, ["metric", "p50 ms", "p90 ms", "p99 ms"], rows)
    if record["errors"]:
        out.warn(f"failed requests: {record['error_kinds']}")
    if record["unsent"]:
        out.warn(
            f"{record['unsent']} of {record['requests']} requests were scheduled after the "
            f"{record['deadline_s']:g} s deadline and not sent"
        )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
