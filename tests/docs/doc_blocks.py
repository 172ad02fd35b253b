"""Read the commands out of README.md and docs/*.md, and check them against the CLI's tree."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from typer import _click as click

ROOT = Path(__file__).resolve().parents[2]
RUN_MARK = "<!-- doctest: run -->"
SHELL_TAGS = {"", "bash", "sh", "shell", "console"}
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"(?<!`)`(tdk [^`]+)`(?!`)")
YAML_RUN = re.compile(r"^\s*-?\s*(?:run|entry):\s*(tdk\b.*)$", re.M)
OPERATORS = {"&&", "||", "|", ";", "&", ">", ">>", "<", "2>", ">&", "(", ")", "|&"}


@dataclass(frozen=True)
class Block:
    """A fenced block: where it is, its text, and whether the docs ask for it to run."""

    file: Path
    line: int
    tag: str
    text: str
    run: bool

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        run = bool(before) and before[-1].strip() == RUN_MARK
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(path, line, match.group(1), match.group(2), run))
    return found


def marked(path: Path, mark: str) -> list[Block]:
    """The fenced blocks right after ``<!-- doctest: MARK -->`` (e.g. ``moto``: run against a
    mocked cloud rather than in a shell)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        if before and before[-1].strip() == f"<!-- doctest: {mark} -->":
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(path, line, match.group(1), match.group(2), False))
    return found


def tdk_lines(path: Path) -> list[tuple[str, str]]:
    """(where, command line) of every ``tdk`` command the file shows: shell blocks, CI YAML
    ``run:`` steps and inline code spans."""
    lines: list[tuple[str, str]] = []
    text = path.read_text(encoding="utf-8")
    for block in blocks(path):
        joined = block.text.replace("\\\n", " ")
        if block.tag in SHELL_TAGS:
            lines += [(block.where, line) for line in joined.splitlines()]
        elif block.tag in ("yaml", "yml"):
            lines += [(block.where, m.group(1)) for m in YAML_RUN.finditer(joined)]
    prose = FENCE.sub("", text)
    lines += [(f"{path.relative_to(ROOT)} (inline)", m.group(1)) for m in INLINE.finditer(prose)]
    return lines


def commands(line: str) -> list[list[str]]:
    """The ``tdk`` invocations on one shell line, as argument lists (without ``tdk``)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: a template line, not a command
        return []
    found: list[list[str]] = []
    current: list[str] | None = None
    at_start = True
    for token in tokens:
        if token in OPERATORS or set(token) <= set("&|;<>()"):
            current, at_start = None, True
            continue
        if at_start and token == "tdk":
            current = []
            found.append(current)
        elif current is not None:
            current.append(token)
        at_start = False
    return found


def _options(command: click.Command) -> set[str]:
    names = {"--help"}
    for param in command.params:
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


def problems(root: click.Command, args: list[str]) -> list[str]:
    """What in ``tdk ARGS`` does not exist: an unknown subcommand or an unknown flag."""
    command, path, found = root, ["tdk"], []
    for token in args:
        token = token.strip("[]")
        default = getattr(command, "default_command", None)  # `tdk bench` is `tdk bench tensors`
        if default is not None and token not in command.commands and token != "--help":  # type: ignore[attr-defined]
            command = command.commands[default]  # type: ignore[attr-defined]
        if token.startswith("-") and len(token) > 1 and not re.match(r"-\d", token):
            option = token.split("=", 1)[0]
            if option not in _options(command):
                found.append(f"`{' '.join(path)}` has no option {option}")
        elif hasattr(command, "commands"):  # a group: the next word is a subcommand
            sub = command.commands.get(token)
            if sub is None:
                found.append(f"`{' '.join(path)}` has no command {token!r}")
                break
            command = sub
            path.append(token)
    return found
