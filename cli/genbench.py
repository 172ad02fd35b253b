"""``tdk bench generate``: streamed generate requests against an LLM, with
TTFT, TPOT, e2e latency, output tokens/s and errors (``infra.perf.bench.genbench``): the
options (one group) and the report; parsing is ``infra.perf.bench.genrequest``'s."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.groups import option_group
from cli.invoke import MaxTokensOpt, PromptOpt
from cli.output import Output
from infra.perf.bench.genrequest import DEFAULT_MAX_TOKENS, DEFAULT_REQUESTS, GenRequest
from tdk.errors import TdkError, UsageError

if TYPE_CHECKING:
    from infra.clients.generate import Generator
    from infra.perf.bench.genbench import GenLoad

PromptsOpt = Annotated[
    Path | None,
    typer.Option("--prompts", help="Generate from these prompts, one per line, used in turn."),
]
RequestsOpt = Annotated[
    int, typer.Option("--requests", min=1, help="With --prompt/--prompts: requests in all.")
]
GoodputOpt = Annotated[
    str | None,
    typer.Option(
        "--goodput",
        help="With --prompt/--prompts: SLOs as AIPerf takes them, e.g. "
        '"time_to_first_token:100 inter_token_latency:3.4" (ms; '
        "output_token_throughput_per_user in tokens/s): goodput is the requests per second "
        "meeting all of them.",
    ),
]
CsvOpt = Annotated[
    Path | None,
    typer.Option("--csv", help="With --prompt/--prompts: also write the metrics as CSV here."),
]


@option_group
@dataclass(frozen=True)
class GenerationOptions:
    """A generate bench's options: what it sends, how many, how the report is shaped."""

    prompt: PromptOpt = None
    prompts: PromptsOpt = None
    requests: RequestsOpt = DEFAULT_REQUESTS
    max_tokens: MaxTokensOpt = DEFAULT_MAX_TOKENS
    goodput: GoodputOpt = None
    csv: CsvOpt = None

    @property
    def generates(self) -> bool:
        """A generate bench (--prompt/--prompts): streamed text, not tensors."""
        return self.prompt is not None or self.prompts is not None

    def check(self) -> None:
        """A generate bench needs what to send: --prompt or --prompts."""
        if not self.generates:
            raise UsageError(
                "tdk bench generate needs --prompt TEXT or --prompts FILE",
                hint="e.g. tdk bench generate --target-model llm-0 --prompt 'tell me a story'",
            )

    def request(self) -> GenRequest:
        return GenRequest(
            prompt=self.prompt,
            prompts=self.prompts,
            requests=self.requests,
            max_tokens=self.max_tokens,
            goodput=self.goodput,
            csv=self.csv,
        )


def bench_generate(
    out: Output,
    client: Generator,
    loads: list[GenLoad],
    max_tokens: int,
    recorded: dict[str, str | None] | None = None,
    report: tuple[dict[str, float] | None, Path | None] = (None, None),
) -> None:
    """Run each load level and print the metrics (tables, or the --json document: one level's
    record, or ``{"runs": [...]}``); exit 1 when no request produced a token."""
    from infra.perf.bench.genbench import run_genbench
    from infra.perf.bench.genrequest import write_csv

    slos, csv_path = report
    records = []
    for load in loads:
        with out.progress() as start:
            advance = start(f"bench {client.model}", load.requests)
            record = run_genbench(
                lambda p: client.generate(p, max_tokens, True), load, advance, slos
            )
        record.update(recorded or {}, model=client.model, max_tokens=max_tokens)
        records.append(record)
    if csv_path is not None:
        write_csv(csv_path, records)
    if out.json_mode:
        out.json(records[0] if len(records) == 1 else {"runs": records})
    else:
        for record in records:
            _table(out, record)
    if not any(record["output_tokens"] for record in records):
        raise TdkError(
            f"no request to {client.model} produced a token "
            f"({sum(r['errors'] for r in records)} failed)",
            hint="check the model streams text (tdk invoke --prompt), the errors above, or "
            "--max-tokens",
        )


def _table(out: Output, record: dict[str, Any]) -> None:
    metrics = record["metrics"]
    rows = [
        (name, *(_ms(metrics[key][s]) for s in ("avg", "min", "max", "std", "p50", "p90", "p99")))
        for name, key in (
            ("time to first token (ms)", "time_to_first_token"),
            ("inter token latency (ms)", "inter_token_latency"),
            ("request latency (ms)", "request_latency"),
            ("output tokens/s per user", "output_token_throughput_per_user"),
            ("output sequence length", "output_sequence_length"),
            ("input sequence length (words)", "input_sequence_length"),
        )
    ]
    arrival = f", {record['arrival']} arrivals" if record.get("arrival") else ""
    title = (
        f"tdk bench {record['model']} ({record['mode']} {record['level']}{arrival}): "
        f"{record['output_tokens_per_s']} output tokens/s, {record['requests_per_s']} req/s, "
        f"{record['errors']} errors"
    )
    if metrics["goodput"] is not None:
        title += f", goodput {metrics['goodput']} req/s"
    out.table(title, ["metric", "avg", "min", "max", "std", "p50", "p90", "p99"], rows)
    if record["errors"]:
        out.warn(f"failed requests: {record['error_kinds']}")
    if record["unsent"]:
        out.warn(
            f"{record['unsent']} of {record['requests']} requests were scheduled after the "
            f"{record['deadline_s']:g} s deadline and not sent"
        )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
