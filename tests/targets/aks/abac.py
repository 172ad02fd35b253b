"""A small evaluator of Azure role assignment conditions (version 2.0), the subset the kit
writes, so tests ask what a condition allows rather than how it is spelled.

The grammar and semantics follow MicrosoftDocs/azure-docs
``articles/role-based-access-control/conditions-format.md`` and
``articles/storage/blobs/storage-auth-abac-attributes.md`` (read 2026-12-07): a condition is
checked for the request's data action (and suboperation); ``ActionMatches{'a'}`` and
``SubOperationMatches{'s'}`` test them; ``@Resource[attr]`` / ``@Request[attr]`` compare an
attribute; an attribute the operation does not carry (List Blobs has no blob path) cannot be
evaluated, and such a condition fails the access check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

_TOKEN = re.compile(
    r"\s*(\(|\)|!|AND\b|OR\b|NOT\b"
    r"|ActionMatches\{'[^']*'\}|SubOperationMatches\{'[^']*'\}"
    r"|@(?:Resource|Request)\[[^\]]*\]\s+\w+\s+'[^']*')"
)
_COMPARE = re.compile(r"(@(?:Resource|Request)\[[^\]]*\])\s+(\w+)\s+'([^']*)'")


class Unevaluable(Exception):
    """An attribute the request does not carry."""


@dataclass(frozen=True)
class Request:
    """One storage operation: its data action, suboperation and attributes, e.g.
    ``{"@Resource[Microsoft.Storage/.../blobs:path]": "v1/x"}``."""

    action: str
    suboperation: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)


def _tokens(condition: str) -> list[str]:
    out, pos = [], 0
    while pos < len(condition.rstrip()):
        match = _TOKEN.match(condition, pos)
        assert match, f"cannot read the condition at {condition[pos : pos + 40]!r}"
        out.append(match.group(1))
        pos = match.end()
    return out


Node = Callable[[Request], bool]


class _Parser:
    """Reads a condition into a tree of closures, evaluated later left to right, stopping as
    soon as an AND or OR is decided (so an operation never compares an attribute the clause
    that names it excludes, as the documented list-and-read condition relies on)."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.pos = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def either(self) -> Node:
        nodes = [self.both()]
        while self.peek() == "OR":
            self.take()
            nodes.append(self.both())
        return lambda r: any(n(r) for n in nodes)

    def both(self) -> Node:
        nodes = [self.unary()]
        while self.peek() == "AND":
            self.take()
            nodes.append(self.unary())
        return lambda r: all(n(r) for n in nodes)

    def unary(self) -> Node:
        token = self.take()
        if token in ("!", "NOT"):
            inner = self.unary()
            return lambda r: not inner(r)
        if token == "(":
            node = self.either()
            assert self.take() == ")"
            return node
        return _atom(token)


def _atom(token: str) -> Node:
    if token.startswith("ActionMatches"):
        action = token[len("ActionMatches{'") : -2]
        return lambda r: r.action == action
    if token.startswith("SubOperationMatches"):
        sub = token[len("SubOperationMatches{'") : -2]
        return lambda r: r.suboperation == sub
    match = _COMPARE.fullmatch(token)
    assert match, token
    attribute, operator, value = match.groups()
    compare: dict[str, Callable[[str], bool]] = {
        "StringStartsWith": lambda actual: actual.startswith(value),
        "StringLike": lambda actual: fnmatchcase(actual, value),
        "StringEquals": lambda actual: actual == value,
    }
    assert operator in compare, f"operator {operator} is not in this evaluator"

    def node(request: Request) -> bool:
        if attribute not in request.attributes:
            raise Unevaluable(attribute)
        return compare[operator](request.attributes[attribute])

    return node


def allows(condition: str | None, request: Request) -> bool:
    """Whether a role assignment with ``condition`` lets ``request`` through (None: no
    condition, the role alone decides)."""
    if condition is None:
        return True
    parser = _Parser(_tokens(condition))
    tree = parser.either()
    assert parser.peek() is None, f"trailing tokens {parser.tokens[parser.pos :]}"
    try:
        return tree(request)
    except Unevaluable:
        return False
