"""All command output goes through one object: rich for people, JSON for machines."""

from __future__ import annotations

import json
import logging
import os
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich import filesize
from rich.console import Console, ConsoleOptions, RenderableType
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from tdk.redact import redact

PIPE_WIDTH = 140  # tables piped to a file or CI log keep their columns instead of 80

#: C0 controls but line feed and tab, DEL and the C1 controls (U+0080-U+009F, which a terminal
#: may take as CSI/OSC) and the Unicode line/paragraph separators, written as escapes: a name,
#: prefix, owner or path never moves the cursor, sets a title or starts a line of its own
_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]
    if chr(code) not in "\n\t"
}
_LINE_ESCAPES = {**_ESCAPES, ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def terminal_safe(text: str, one_line: bool = False) -> str:
    """``text`` as it may be shown: a URL's credentials redacted (``tdk.redact``), control
    characters written as escapes (``\\x1b``); ``one_line`` escapes line feeds and tabs too
    (a table cell: a newline in a name must not make a row)."""
    return redact(text).translate(_LINE_ESCAPES if one_line else _ESCAPES)


class _SafeConsole(Console):
    """A console that escapes control characters in everything it prints, whoever calls it
    (a message, a table, a description): rich's own styles and cursor moves are added after
    this, as control segments, so they still work."""

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterator[Segment]:
        for segment in super().render(renderable, options):
            if (
                segment.control
                or segment.text == "\n"
                or (segment.text.isprintable() and "@" not in segment.text)
            ):
                yield segment
            else:
                yield Segment(terminal_safe(segment.text), segment.style, segment.control)


class _Warnings(logging.Handler):
    """Hands each warning record's message to ``say``."""

    def __init__(self, say: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self._say = say

    def emit(self, record: logging.LogRecord) -> None:
        self._say(record.getMessage())


def _console(stderr: bool) -> Console:
    """Colour only on a terminal and never under ``NO_COLOR`` (https://no-color.org)."""
    stream = sys.stderr if stderr else sys.stdout
    interactive = stream.isatty() or "COLUMNS" in os.environ
    plain = bool(os.environ.get("NO_COLOR")) or not stream.isatty()
    return _SafeConsole(
        stderr=stderr,
        width=None if interactive else PIPE_WIDTH,
        color_system=None if plain else "auto",
        highlight=False,
    )


def _fit_columns(
    columns: Sequence[str], rows: Sequence[Sequence[str]], width: int, drop: Sequence[int]
) -> list[int]:
    """Indices of the columns to show: drop ``drop`` (in order) until the widest cells fit."""
    shown = list(range(len(columns)))
    widest = [max([len(columns[i]), *(len(row[i]) for row in rows)]) for i in shown]
    for index in drop:
        if sum(widest[i] + 3 for i in shown) + 1 <= width:
            break
        shown.remove(index)
    return shown


#: the narrowest a column of long text (a note, a message) is wrapped to
MIN_WRAP = 20


def _word_widths(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    shown: Sequence[int],
    whole: Sequence[int],
    width: int,
) -> list[int] | None:
    """The width of each shown column such that no word of a cell or header is split (whole
    columns: no cell wrapped at all) and long text keeps ``MIN_WRAP`` columns; ``None`` when
    the terminal is too narrow for that."""
    least, most = [], []
    for index in shown:
        texts = [columns[index], *(row[index] for row in rows)]
        longest = max(len(text) for text in texts)
        word = max((len(w) for text in texts for w in text.split()), default=1)
        if index in whole and rows:
            least.append(max(len(r[index]) for r in rows))
        else:  # a prose column wrapped to a word a line is unreadable: vertical instead
            least.append(max(word, MIN_WRAP) if longest > MIN_WRAP else word)
        most.append(max(longest, least[-1]))
    spare = width - (3 * len(shown) + 1) - sum(least)
    if spare < 0:
        return None
    widths = list(least)
    for i in sorted(range(len(shown)), key=lambda i: most[i] - least[i]):  # cheapest first
        extra = min(most[i] - least[i], spare)
        widths[i] += extra
        spare -= extra
    return widths


def stability(spread: float | None, windows: int, stable: bool) -> str:
    """A measurement's stability in plain words: ``unstable: 10 windows, spread 84 %``."""
    shown = "unknown" if spread is None or spread == float("inf") else f"{spread * 100:.0f} %"
    return f"{'stable' if stable else 'unstable'}: {windows} windows, spread {shown}"


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
    #: the warnings already said by this command
    said: set[str] = field(default_factory=set)

    def json(self, payload: Any) -> None:
        """Print ``payload`` as JSON on stdout (always, whatever the mode)."""
        text = json.dumps(payload, indent=2, sort_keys=False, default=str)
        sys.stdout.write(redact(text) + "\n")
        sys.stdout.flush()

    def text(self, text: str) -> None:
        """Plain text on stdout as given (a completion script, a version, a report), its
        control characters but line feeds and tabs escaped."""
        text = terminal_safe(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()

    def info(self, message: str) -> None:
        """A line for people (rich markup allowed); silent in JSON mode (goes to stderr there).
        Never wrapped, so a path or URL in it stays whole."""
        (self.err if self.json_mode else self.console).print(message, soft_wrap=True)

    def note(self, message: str) -> None:
        """What the command is waiting for, on stderr (stdout keeps its result), in any mode."""
        self.err.print(message, soft_wrap=True, markup=False)

    def warn(self, message: str) -> None:
        """A warning on stderr, wrapped at the terminal's width, and said once per command
        however often the code path that finds it runs."""
        if message in self.said:
            return
        self.said.add(message)
        text = self._fill(f"warning: {message}", "")
        self.err.print(Text(text[:8], style="yellow") + Text(text[8:]), soft_wrap=True)

    @contextmanager
    def library_warnings(self, logger: str = "tdk") -> Iterator[None]:
        """While the block runs, what the library logs as a warning under ``logger`` (a Triton
        started with less isolation than it could, and what that exposes) is said through
        ``warn``: once, marked as a warning, in any mode."""
        handler = _Warnings(self.warn)
        target = logging.getLogger(logger)
        target.addHandler(handler)
        try:
            yield
        finally:
            target.removeHandler(handler)

    def error(self, message: str, hint: str = "") -> None:
        """An error and its hint on stderr (the top-level handler's one way to print), wrapped
        at the terminal's width; the hint's lines indented under it."""
        self.err.print(Text(self._fill(f"error: {message}", ""), style="red"), soft_wrap=True)
        if hint:
            self.err.print(Text(self._fill(f"  hint: {hint}", "    ")), soft_wrap=True)

    def _fill(self, text: str, indent: str) -> str:
        """``text`` wrapped at a terminal's width between words, never inside one (a path or a
        URL stays whole); as it is when stderr is a pipe or a file (a log, a grep)."""
        if not self.err.is_terminal:
            return text
        return "\n".join(
            textwrap.fill(
                line, self.err.width, subsequent_indent=indent, break_long_words=False,
                break_on_hyphens=False, drop_whitespace=True,
            ) or line
            for line in text.splitlines()
        )  # fmt: skip

    def table(
        self,
        title: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        whole: Sequence[int] = (0,),
        drop: Sequence[int] = (),
    ) -> None:
        """A rich table for people (callers print JSON themselves in JSON mode).

        Columns in ``whole`` (names, paths, URLs) are never cut or wrapped: when the table is
        wider than the terminal the columns in ``drop`` go first, in that order, then the
        others wrap between words, never inside one (a name, a number). When even that does
        not fit, each row is printed as ``column: value`` lines instead. The title is a line of
        its own, so a URL in it stays whole.
        """
        cells = [["" if cell is None else terminal_safe(str(cell), True) for cell in row]
                 for row in rows]  # fmt: skip
        title = terminal_safe(title, True)
        shown = _fit_columns(columns, cells, self.console.width, drop)
        widths = _word_widths(columns, cells, shown, whole, self.console.width)
        if title:
            self.console.print(Text(title, style="italic"), soft_wrap=True)
        if widths is None:
            self._vertical(columns, cells)
            return
        table = Table()
        for index, width in zip(shown, widths, strict=True):
            table.add_column(columns[index], width=width, no_wrap=index in whole, overflow="fold")
        for row in cells:
            table.add_row(*(row[i] for i in shown))
        self.console.print(table)

    def _vertical(self, columns: Sequence[str], cells: Sequence[Sequence[str]]) -> None:
        """One block per row, one ``column: value`` line per cell: nothing is ever split."""
        for number, row in enumerate(cells):
            if number:
                self.console.print("")
            self.console.print(Text(f"{columns[0]}: {row[0]}", style="bold"), soft_wrap=True)
            for name, value in zip(columns[1:], row[1:], strict=True):
                self.console.print(Text(f"  {name}: {value}"), soft_wrap=True)

    @contextmanager
    def progress(self, after_s: float = 0.0) -> Iterator[Callable[..., Callable[[int], None]]]:
        """Progress bars on stderr: yields ``start(description, total, unit="")`` ->
        ``advance(n)`` (thread-safe; uploads advance it from several threads).

        The bars appear once the work has run ``after_s`` seconds (a quick publish prints
        none). Silent in JSON mode and when stderr is not a terminal.
        """
        if self.json_mode or not self.err.is_terminal:
            yield lambda description, total, unit="": lambda amount: None
            return
        columns = (TextColumn("{task.description}"), BarColumn(), _Amount(), TimeRemainingColumn())
        bar = Progress(*columns, console=self.err, transient=True)
        timer = threading.Timer(after_s, bar.start)
        timer.daemon = True
        timer.start()

        def start(description: str, total: int, unit: str = "") -> Callable[[int], None]:
            task = bar.add_task(description, total=total, unit=unit)
            return lambda amount: bar.advance(task, amount)

        try:
            yield start
        finally:
            timer.cancel()
            timer.join()
            if bar.live.is_started:
                bar.stop()
