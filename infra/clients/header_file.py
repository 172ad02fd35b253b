"""Request headers read from a file (``tdk tune --url ... --header-file``): the key a Triton
started with ``--http-restricted-api`` demands on its repository and config APIs, kept off every
command line (``/proc/<pid>/cmdline`` is every local user's to read, a file of one's own is not).

One ``Name: value`` per line; blank lines and lines starting with ``#`` are skipped. The file
must be a regular file of this user that no one else may read (``chmod 600``)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from tdk import bounded
from tdk.errors import UsageError

MAX_BYTES = 64 * 1024
#: a header name is an RFC 9110 token; a value holds no control character but tab
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def read_header_file(path: Path, flag: str = "--header-file") -> tuple[tuple[str, str], ...]:
    """The headers in ``path``; UsageError naming ``flag``, the file and the fix otherwise."""
    try:
        fd = bounded.open_regular(path, follow=False)
    except OSError as exc:
        raise UsageError(
            f"{flag} {path}: cannot read it ({exc.strerror or exc})",
            hint="give a regular file (not a link) holding `Name: value` lines",
        ) from None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o077:
        os.close(fd)
        raise UsageError(
            f"{flag} {path}: other users may read or own it, and it holds a secret",
            hint=f"make it yours alone: chmod 600 {path}",
        )
    data = bounded.read_fd(fd, MAX_BYTES)
    if data is None:
        raise UsageError(f"{flag} {path}: larger than {MAX_BYTES} bytes", hint="one header a line")
    return _parse(data, f"{flag} {path}")


def _parse(data: bytes, source: str) -> tuple[tuple[str, str], ...]:
    headers: list[tuple[str, str]] = []
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, colon, value = line.partition(":")
        value = value.strip()
        if not colon or not _NAME.fullmatch(name.strip()) or _CONTROL.search(value):
            raise UsageError(
                f"{source}, line {number}: not a `Name: value` header",
                hint="one header a line, e.g. `tdk-repository-key: <the key>`",
            )
        headers.append((name.strip(), value))
    if not headers:
        raise UsageError(f"{source}: holds no header", hint="e.g. `tdk-repository-key: <the key>`")
    return tuple(headers)
