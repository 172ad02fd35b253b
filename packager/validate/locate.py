"""Where a config field sits in ``config.pbtxt``: a small scanner over the protobuf text format
that maps field paths (``input[0].dims``, ``ensemble_scheduling.step[1].input_map[TEXT]``) to
1-based line and column. protobuf's Python ``text_format`` keeps no positions, so we keep our
own; the config itself is always parsed by ``text_format`` with Triton's ModelConfig."""

from __future__ import annotations

import re

Position = tuple[int, int]
_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\f\v]+|\n)
      | (?P<comment>\#[^\n]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<word>[A-Za-z0-9_.+\-]+)
      | (?P<punct>[{}<>\[\]:,;/])
      | (?P<other>.)""",
    re.VERBOSE,
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANNOTATION = re.compile(r" \([^()]*\)")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(token, line, column) for every significant token; strings keep their quotes."""
    found: list[tuple[str, int, int]] = []
    line, line_start = 1, 0
    for match in _TOKEN.finditer(text):
        kind, value = match.lastgroup, match.group()
        if kind == "space":
            if value == "\n":
                line, line_start = line + 1, match.end()
            continue
        if kind != "comment":
            found.append((value, line, match.start() - line_start + 1))
    return found


class Locations:
    """Field path -> position of the field's name (or, in a ``[...]`` list, of the element)."""

    def __init__(self, text: str) -> None:
        self.positions: dict[str, Position] = {}
        self._tokens = _tokens(text)
        self._at = 0
        while self._at < len(self._tokens):
            self._body(("",), closer="")
            self._at += 1  # a stray closing bracket at the top level: skip it

    def _peek(self) -> str:
        return self._tokens[self._at][0] if self._at < len(self._tokens) else ""

    def _record(self, path: str, position: Position) -> None:
        self.positions.setdefault(path, position)

    def _body(self, prefixes: tuple[str, ...], closer: str) -> str | None:
        """Fields up to ``closer``, recorded under every prefix (``step[0]`` and, for a first
        element, ``step``); returns the entry's ``key`` when it is a map entry."""
        counts: dict[str, int] = {}
        key = None
        while self._at < len(self._tokens) and self._peek() != closer:
            token, line, col = self._tokens[self._at]
            self._at += 1
            if not _NAME.fullmatch(token):
                if token in ("}", ">"):
                    return key  # unbalanced: let the caller resynchronise
                continue
            bases = tuple(f"{p}.{token}" if p else token for p in prefixes)
            for base in bases:
                self._record(base, (line, col))
            if self._peek() == ":":
                self._at += 1
            if self._peek() == "[":
                self._at += 1
                while self._at < len(self._tokens) and self._peek() != "]":
                    if self._peek() == ",":
                        self._at += 1
                        continue
                    position = self._tokens[self._at][1:]
                    self._element(bases, counts, token, position)
                self._at += 1
            else:
                value = self._element(bases, counts, token, (line, col))
                if token == "key" and value is not None:
                    key = value
        return key

    def _element(
        self, bases: tuple[str, ...], counts: dict[str, int], name: str, position: Position
    ) -> str | None:
        """One value of field ``name``: a message (recursed into) or a scalar (its text)."""
        index = counts.get(name, 0)
        counts[name] = index + 1
        paths = tuple(f"{base}[{index}]" for base in bases)
        for path in paths:
            self._record(path, position)
        opener = self._peek()
        if opener in ("{", "<"):
            self._at += 1
            key = self._body(paths + (bases if index == 0 else ()), "}" if opener == "{" else ">")
            self._at += 1
            for base in bases if key is not None else ():
                self._record(f"{base}[{key}]", position)
            return None
        token = self._peek()
        self._at += 1
        while self._peek()[:1] in ('"', "'") and token[:1] in ('"', "'"):
            self._at += 1  # adjacent strings concatenate
        return token[1:-1] if token[:1] in ('"', "'") else token

    def find(self, field_path: str) -> Position:
        """The position of ``field_path`` or of its nearest enclosing field; (1, 1) if none."""
        path = _ANNOTATION.sub("", field_path).strip()
        while path:
            if path in self.positions:
                return self.positions[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return (1, 1)
