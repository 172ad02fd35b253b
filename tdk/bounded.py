"""The one reader of JSON and YAML files tdk did not write itself (engine files, stack files,
bench JSON, manifests, ledgers, lock records, credentials): bounded and typed.

- only a regular file is opened, and it is checked before the open (a FIFO would block the
  open forever, ``/dev/zero`` never ends) and again on the descriptor (opened non-blocking);
- at most ``limit`` bytes are read;
- JSON and YAML nested deeper than ``depth`` are refused before Python's parsers recurse
  (200,000 brackets were a RecursionError), YAML aliases that expand past ``MAX_ALIAS_NODES``
  values are refused (a "billion laughs" file took 11 s and 2 GB);
- text must be UTF-8, strings must be Unicode (a ``\\ud800`` escape is a lone surrogate that
  no later write can encode), JSON numbers must be finite (``NaN`` and ``1e999`` are not JSON).

Every refusal is a ``DocumentError`` naming the file and carrying the caller's hint.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any

import yaml

from tdk.errors import TdkError

MAX_BYTES = 16 * 1024 * 1024  # the default cap: a settings file holds a few KB
MAX_DEPTH = 64  # the files tdk reads nest under 10 levels
MAX_ALIAS_NODES = 100_000  # YAML nodes reachable through aliases

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{},"')
_SQUARE = bytes.maketrans(b"{}", b"[]")
_STEP = tuple(1 if byte == ord("[") else -1 if byte == ord("]") else 0 for byte in range(256))
_SURROGATE = re.compile("[\ud800-\udfff]")


class DocumentError(TdkError):
    """A file or document refused by the bounded reader; ``reason`` says why, without the
    file's name (for callers that phrase their own message)."""

    def __init__(self, source: str, reason: str, hint: str) -> None:
        super().__init__(f"{source}: {reason}", hint=hint)
        self.source = source
        self.reason = reason


class NotRegularFile(OSError):
    """A path that is a FIFO, a device, a socket or a directory where a file is read."""


def kind_of(mode: int) -> str:
    """``"a FIFO (named pipe)"``, ``"a character device"``, ... for a non-regular ``st_mode``."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path, dir_fd: int | None = None, follow: bool = True) -> int:
    """A read-only descriptor of ``path`` if it is a regular file, NotRegularFile otherwise,
    decided before the open (which cannot then block) and checked again on the descriptor.
    ``follow`` False refuses a symbolic link as the last component (ELOOP)."""
    found = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow)
    if not stat.S_ISREG(found.st_mode):
        raise NotRegularFile(errno.EINVAL, f"{kind_of(found.st_mode)}, not a file", str(path))
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode):  # swapped between the stat and the open
        os.close(fd)
        raise NotRegularFile(errno.EINVAL, f"{kind_of(opened.st_mode)}, not a file", str(path))
    return fd


def read_fd(fd: int, limit: int) -> bytes | None:
    """At most ``limit`` bytes from ``fd`` (closed here); None when it holds more."""
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def read_bounded(path: str | Path, limit: int = MAX_BYTES, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file ``path``; NotRegularFile for anything else, OSError
    (EFBIG) when it holds more than ``limit`` bytes."""
    data = read_fd(open_regular(path, dir_fd=dir_fd), limit)
    if data is None:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return data


def read_document(path: Path, hint: str, limit: int = MAX_BYTES) -> bytes:
    """``read_bounded`` with every failure a DocumentError naming ``path``."""
    try:
        return read_bounded(path, limit)
    except FileNotFoundError:
        raise DocumentError(str(path), "no such file", hint) from None
    except OSError as exc:
        raise DocumentError(str(path), f"cannot read it ({exc.strerror or exc})", hint) from None


def load_json(path: Path, hint: str, limit: int = MAX_BYTES, depth: int = MAX_DEPTH) -> Any:
    """The JSON document in the file ``path``, read and parsed bounded."""
    return parse_json(read_document(path, hint, limit), str(path), hint, depth)


def load_yaml(path: Path, hint: str, limit: int = MAX_BYTES, depth: int = MAX_DEPTH) -> Any:
    """The YAML document in the file ``path``, read and parsed bounded."""
    return parse_yaml(read_document(path, hint, limit), str(path), hint, depth)


def json_structure(raw: bytes) -> bytes:
    """``raw``'s brackets, braces and commas outside its strings, in order, in time linear in
    its length whatever it holds (a backtracking string pattern took 0.8 s for 16 KB of escaped
    quotes, growing with the square). Escaped backslashes and quotes go first (when there is a
    backslash at all), then all but quotes and structure, so each string is one quote-to-quote
    run; an unterminated string runs to the end."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(raw.translate(None, _NOT_STRUCTURE).split(b'"')[::2])


def nests_deeper(structure: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether a ``json_structure`` nests deeper than ``limit`` (an unclosed bracket counts).
    The innermost empty pairs go first (a tree without its leaves is one level lower; a flat
    body of ``[]`` is then empty), then levels are counted in C (``accumulate``), stopping at
    the first one past the limit; at most ``limit`` openings cannot nest deeper."""
    if structure.count(b"[") + structure.count(b"{") <= limit:
        return False  # an inference request's JSON header: a few openings, nothing to count
    brackets = structure.translate(_SQUARE, b",")
    inner = brackets.replace(b"[]", b"")
    over = limit - (1 if len(inner) < len(brackets) else 0)
    levels = accumulate(map(_STEP.__getitem__, inner), initial=0)
    return next(filter(over.__lt__, levels), None) is not None


def json_depth_over(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether ``raw``'s arrays and objects nest deeper than ``limit`` (strings skipped),
    decided without parsing it."""
    return nests_deeper(json_structure(raw), limit)


def structure_values(structure: bytes) -> int:
    """At least how many values a ``json_structure`` holds (each comma separates one more,
    each array or object is one)."""
    return 1 + structure.count(b",") + structure.count(b"[") + structure.count(b"{")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(data: bytes | str, source: str, hint: str, depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed as JSON: nested at most ``depth`` deep (counted before parsing), UTF-8,
    finite numbers, no lone surrogates; DocumentError naming ``source`` otherwise."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if json_depth_over(raw, depth):
        raise DocumentError(source, f"nested more than {depth} deep", hint)
    text = _decoded(raw, source, hint)
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_constant)
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else exc.__class__.__name__
        raise DocumentError(source, f"not valid JSON ({reason})", hint) from None
    return _unicode(value, source, hint)


def _decoded(raw: bytes, source: str, hint: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(source, f"not UTF-8 text (byte {exc.start})", hint) from None
    return text[1:] if text.startswith("\ufeff") else text


def _unicode(value: Any, source: str, hint: str) -> Any:
    """``value`` unchanged when no string in it (keys included) holds a lone surrogate."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                code = f"\\u{ord(found.group()):04x}"
                raise DocumentError(source, f"holds a lone surrogate {code}, not text", hint)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple | set):
            pending.extend(item)
    return value


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a nesting limit and an alias budget: nine nested anchors of
    ten aliases each are 10^9 values once serialised."""

    max_depth = MAX_DEPTH

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._expanded = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        alias = self.check_event(yaml.AliasEvent)
        self._depth += 1
        if self._depth > self.max_depth:
            raise _TooDeep(f"nested more than {self.max_depth} deep")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if alias:
            self._expanded += self._size(node)
            if self._expanded > MAX_ALIAS_NODES:
                raise _TooDeep(f"its aliases expand to more than {MAX_ALIAS_NODES} values")
        return node

    def _size(self, node: Any) -> int:
        """Nodes under ``node`` once aliases are expanded (memoised: shared nodes once)."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        size = 1
        if isinstance(node, yaml.SequenceNode):
            size += sum(self._size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            size += sum(self._size(k) + self._size(v) for k, v in node.value)
        self._sizes[id(node)] = size = min(size, MAX_ALIAS_NODES + 1)
        return size


class _TooDeep(yaml.YAMLError):
    """A limit of ``_BoundedLoader`` was passed."""


def parse_yaml(data: bytes | str, source: str, hint: str, depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed as one YAML document with PyYAML's safe loader, nested at most ``depth``
    deep, aliases bounded, UTF-8, no lone surrogates; DocumentError naming ``source``."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    text = _decoded(raw, source, hint)
    loader = type("_Loader", (_BoundedLoader,), {"max_depth": depth})
    try:
        value = yaml.load(text, Loader=loader)
    except _TooDeep as exc:
        raise DocumentError(source, str(exc), hint) from None
    except RecursionError:
        raise DocumentError(source, f"nested more than {depth} deep", hint) from None
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())[:300]
        raise DocumentError(source, f"not valid YAML ({reason})", hint) from None
    return _unicode(value, source, hint)
