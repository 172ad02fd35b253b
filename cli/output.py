"""All command output goes through one object: rich for people, JSON for machines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table


class ProgressSink:
    """What long-running library code reports to: ``advance(n)`` in units of ``total``."""

    def start(self, description: str, total: int) -> None:
        """Begin a task of ``total`` units (bytes for transfers)."""

    def advance(self, amount: int) -> None:
        """Record ``amount`` units of progress; must be thread-safe."""

    def finish(self) -> None:
        """End the current task."""


@dataclass
class Output:
    """Human output (tables, progress) unless ``json_mode``, then one JSON document."""

    json_mode: bool = False
    console: Console = field(default_factory=lambda: Console(stderr=False))
    err: Console = field(default_factory=lambda: Console(stderr=True))

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
    def progress(
        self, description: str, total: int, transfer: bool = False
    ) -> Iterator[ProgressSink]:
        """A progress bar on stderr (none in JSON mode or when stderr is not a terminal)."""
        if self.json_mode or not self.err.is_terminal:
            yield ProgressSink()
            return
        columns: list[Any] = [TextColumn("{task.description}"), BarColumn()]
        if transfer:
            columns += [DownloadColumn(), TransferSpeedColumn()]
        else:
            columns += [TextColumn("{task.completed}/{task.total}")]
        columns.append(TimeRemainingColumn())
        with Progress(*columns, console=self.err, transient=True) as bar:
            yield _RichSink(bar, bar.add_task(description, total=total))


class _RichSink(ProgressSink):
    def __init__(self, bar: Progress, task: Any) -> None:
        self._bar = bar
        self._task = task

    def start(self, description: str, total: int) -> None:
        self._bar.update(self._task, description=description, total=total, completed=0)

    def advance(self, amount: int) -> None:
        self._bar.advance(self._task, amount)
