"""All command output goes through one object: rich for people, JSON for machines."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich import filesize
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

PIPE_WIDTH = 140  # tables piped to a file or CI log keep their columns instead of 80


def _console(stderr: bool) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    interactive = stream.isatty() or "COLUMNS" in os.environ
    return Console(stderr=stderr, width=None if interactive else PIPE_WIDTH)


class _Amount(ProgressColumn):
    """``done/total``, in bytes (``12.0/48.3 MB``) for tasks started with ``unit="bytes"``."""

    def render(self, task: Task) -> Text:
        total = int(task.total or 0)
        if task.fields.get("unit") == "bytes":
            return Text(f"{filesize.decimal(int(task.completed))}/{filesize.decimal(total)}")
        return Text(f"{int(task.completed)}/{total}")


@dataclass
class Output:
    """Human output (tables, progress) unless ``json_mode``, then one JSON document."""

    json_mode: bool = False
    console: Console = field(default_factory=lambda: _console(stderr=False))
    err: Console = field(default_factory=lambda: _console(stderr=True))

    def json(self, payload: Any) -> None:
        """Print ``payload`` as JSON on stdout (always, whatever the mode)."""
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")
        sys.stdout.flush()

    def info(self, message: str) -> None:
        """A line for people; silent in JSON mode (goes to stderr there)."""
        (self.err if self.json_mode else self.console).print(message)

    def warn(self, message: str) -> None:
        self.err.print(f"[yellow]warning:[/yellow] {message}")

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """A rich table for people (callers print JSON themselves in JSON mode)."""
        table = Table(title=title, title_justify="left")
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*("" if cell is None else str(cell) for cell in row))
        self.console.print(table)

    @contextmanager
    def progress(self) -> Iterator[Callable[..., Callable[[int], None]]]:
        """Progress bars on stderr: yields ``start(description, total, unit="")`` ->
        ``advance(n)`` (thread-safe; uploads advance it from several threads).

        Silent in JSON mode and when stderr is not a terminal.
        """
        if self.json_mode or not self.err.is_terminal:
            yield lambda description, total, unit="": lambda amount: None
            return
        columns = (TextColumn("{task.description}"), BarColumn(), _Amount(), TimeRemainingColumn())
        with Progress(*columns, console=self.err, transient=True) as bar:

            def start(description: str, total: int, unit: str = "") -> Callable[[int], None]:
                task = bar.add_task(description, total=total, unit=unit)
                return lambda amount: bar.advance(task, amount)

            yield start
