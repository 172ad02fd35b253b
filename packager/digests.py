"""sha256 of input files, each read at most once per run, remembered across runs by stat.

A republish must know what changed without reading hundreds of MB again. The cache keys a
file's digest on its real path and (size, mtime_ns, ctime_ns, inode, device): any write to the
file changes its ctime, which no user tool can set back, so a hit is the same bytes.
Stored as JSON under ``$TDK_CACHE_DIR`` (default ``$XDG_CACHE_HOME/tdk`` or ``~/.cache/tdk``);
a cache that cannot be read or written is ignored, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path

from packager.stores.base import sha256_file

CACHE_FILE = "file-sha256.json"
MAX_ENTRIES = 50_000  # oldest entries are dropped beyond this (~150 bytes each)
Stamp = tuple[int, int, int, int, int]


def cache_dir() -> Path:
    configured = os.environ.get("TDK_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tdk"


def _stamp(info: os.stat_result) -> Stamp:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class FileDigests:
    """The digests of one run: each file hashed at most once, the stat cache consulted first."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or cache_dir()) / CACHE_FILE
        self._known: dict[str, tuple[Stamp, str]] = self._load()
        self._run: dict[str, str] = {}
        self._lock = threading.Lock()
        self.hashed_bytes = 0  # bytes read to hash in this run (the cache's misses)

    def _load(self) -> dict[str, tuple[Stamp, str]]:
        try:
            payload = json.loads(self.path.read_text())
            return {
                path: (tuple(entry[0]), str(entry[1])) for path, entry in payload["files"].items()
            }
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return {}

    def sha256(self, path: Path) -> str:
        real = str(path.resolve())
        with self._lock:
            if real in self._run:
                return self._run[real]
        stamp = _stamp(os.stat(real))
        cached = self._known.get(real)
        if cached is not None and cached[0] == stamp:
            digest = cached[1]
        else:
            digest = sha256_file(Path(real))
            if _stamp(os.stat(real)) != stamp:  # written while we read: do not remember it
                return digest
            self.hashed_bytes += stamp[0]
        with self._lock:
            self._run[real] = digest
            self._known[real] = (stamp, digest)
        return digest

    def record(self, path: Path, digest: str, before: os.stat_result) -> None:
        """Remember a digest computed elsewhere (while archiving) from the bytes read after
        ``before`` was taken; dropped if the file changed since."""
        real = str(path.resolve())
        stamp = _stamp(before)
        if _stamp(os.stat(real)) != stamp:
            return
        with self._lock:
            if real not in self._run:
                self.hashed_bytes += stamp[0]
            self._run[real] = digest
            self._known[real] = (stamp, digest)

    def save(self) -> None:
        """Write the cache back (atomically); errors are ignored."""
        entries = list(self._known.items())[-MAX_ENTRIES:]
        payload = {"format_version": 1, "files": {path: list(e) for path, e in entries}}
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tdk-cache-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w") as handle:
                    json.dump(payload, handle)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
