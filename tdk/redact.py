"""Credentials a user put inside a URL (``s3://KEY:SECRET@bucket``, ``https://user:pass@host``)
never reach a terminal or a log: the one helper every printer and the endpoint's log use."""

from __future__ import annotations

import re
from typing import Any, TextIO

#: a scheme, ``://``, then userinfo up to its ``@`` (RFC 3986 3.2.1: no ``/ ? # @`` in it)
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@\"'<>]+@")


def redact(text: str) -> str:
    """``text`` with every URL's userinfo replaced by ``***``."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text else text


def has_userinfo(url: str) -> bool:
    """Whether ``url`` carries userinfo (a user name, a password, a key)."""
    return redact(url) != url


class RedactingStream:
    """A text stream (``sys.stderr`` of a process whose output is a log) writing each piece of
    text redacted; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
