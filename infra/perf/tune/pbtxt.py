"""Edit a ``config.pbtxt`` in place of a rewrite: only the top-level fields that change are
replaced, so comments and layout everywhere else survive.

The text is scanned for the spans of its top-level fields (strings, comments and nesting
respected); each changed field's spans are replaced by that field as ``text_format`` prints it,
appended when new, removed when cleared. The result is parsed with Triton's ``ModelConfig`` and
must equal the intended config, or :class:`PatchRefused` is raised and nothing is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from google.protobuf import text_format

from packager.config import parse_config
from tdk.errors import ConfigError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PatchRefused(ConfigError):
    """The textual edit could not be shown to equal the intended config."""


@dataclass(frozen=True)
class Span:
    """One top-level field of the text: ``text[start:end]`` is ``name: value`` or ``name {..}``."""

    name: str
    start: int
    end: int


def _skip_blank(text: str, i: int) -> int:
    while i < len(text):
        if text[i].isspace() or text[i] in ",;":
            i += 1
        elif text[i] == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline + 1
        else:
            break
    return i


def _skip_string(text: str, i: int) -> int:
    quote, i = text[i], i + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    if i >= len(text):
        raise PatchRefused("config.pbtxt: unterminated string", hint="fix the quoting")
    return i + 1


def _skip_value(text: str, i: int) -> int:
    """The end of the value starting at ``i``: a block, a list or a scalar token."""
    depth = 0
    while i < len(text):
        char = text[i]
        if char in "\"'":
            i = _skip_string(text, i)
            if depth == 0:
                return i
            continue
        if char == "#":
            i = _skip_blank(text, i)
            continue
        if char in "{[<":
            depth += 1
        elif char in "}]>":
            depth -= 1
            if depth == 0:
                return i + 1
        elif depth == 0 and (char.isspace() or char in ",;"):
            return i
        i += 1
    if depth:
        raise PatchRefused("config.pbtxt: unbalanced braces", hint="run `tdk validate`")
    return i


def top_level_spans(text: str) -> list[Span]:
    """Every top-level field of ``text`` in order."""
    spans: list[Span] = []
    i = _skip_blank(text, 0)
    while i < len(text):
        match = _NAME.match(text, i)
        if match is None:
            raise PatchRefused(f"config.pbtxt: unexpected {text[i]!r}", hint="run `tdk validate`")
        j = _skip_blank(text, match.end())
        if j < len(text) and text[j] == ":":
            j = _skip_blank(text, j + 1)
        end = _skip_value(text, j)
        spans.append(Span(match.group(), i, end))
        i = _skip_blank(text, end)
    return spans


def _is_map(descriptor: Any) -> bool:
    """A ``map<K, V>`` field (``parameters``): repeated entries, compared and copied by key."""
    return bool(
        descriptor.message_type is not None and descriptor.message_type.GetOptions().map_entry
    )


def _render(config: Any, field: str) -> str:
    """``field`` of ``config`` as text_format prints it (every element of a repeated field)."""
    only = type(config)()
    descriptor = config.DESCRIPTOR.fields_by_name[field]
    if _is_map(descriptor):
        getattr(only, field).MergeFrom(getattr(config, field))
    elif descriptor.is_repeated:
        getattr(only, field).extend(getattr(config, field))
    elif descriptor.message_type is not None:
        getattr(only, field).CopyFrom(getattr(config, field))
    else:
        setattr(only, field, getattr(config, field))
    return str(text_format.MessageToString(only)).rstrip("\n")


def _changed_fields(before: Any, after: Any) -> list[str]:
    names = {f.name for f, _ in before.ListFields()} | {f.name for f, _ in after.ListFields()}
    changed = []
    for name in sorted(names):
        descriptor = before.DESCRIPTOR.fields_by_name[name]
        if _is_map(descriptor):  # listing a map gives its keys alone: compare the entries
            same = dict(getattr(before, name).items()) == dict(getattr(after, name).items())
        elif descriptor.is_repeated:
            same = list(getattr(before, name)) == list(getattr(after, name))
        elif descriptor.message_type is not None:
            same = before.HasField(name) == after.HasField(name) and (
                getattr(before, name) == getattr(after, name)
            )
        else:
            same = getattr(before, name) == getattr(after, name)
        if not same:
            changed.append(name)
    return changed


def patch_text(text: str, after: Any) -> str:
    """``text`` edited so that it parses to ``after``, touching only the fields that differ."""
    before = parse_config(text)
    spans = top_level_spans(text)
    edits: list[tuple[int, int, str]] = []
    appended: list[str] = []
    for name in _changed_fields(before, after):
        own = [s for s in spans if s.name == name]
        present = after.HasField(name) if _singular_message(after, name) else True
        rendered = _render(after, name) if present else ""
        if own:
            edits.append((own[0].start, own[0].end, rendered))
            edits.extend((s.start, _line_end(text, s.end), "") for s in own[1:])
        elif rendered:
            appended.append(rendered)
    for start, end, replacement in sorted(edits, reverse=True):
        if not replacement:
            end = _line_end(text, end)
            start = _line_start(text, start)
        text = text[:start] + replacement + text[end:]
    if appended:
        text = text.rstrip("\n") + "\n" + "\n".join(appended) + "\n"
    if parse_config(text) != after:
        raise PatchRefused(
            "the edited config.pbtxt does not parse to the tuned config",
            hint="apply the diff printed above by hand",
        )
    return text


def _singular_message(config: Any, name: str) -> bool:
    descriptor = config.DESCRIPTOR.fields_by_name[name]
    return not descriptor.is_repeated and descriptor.message_type is not None


def _line_end(text: str, end: int) -> int:
    """After ``end``, through the newline when only blanks follow on that line."""
    newline = text.find("\n", end)
    if newline >= 0 and not text[end:newline].strip():
        return newline + 1
    return end


def _line_start(text: str, start: int) -> int:
    line = text.rfind("\n", 0, start) + 1
    return line if not text[line:start].strip() else start
