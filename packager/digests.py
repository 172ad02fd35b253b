"""sha256 of input files, each read at most once per run, remembered across runs by stat.

A republish must know what changed without reading hundreds of MB again. The cache keys a
file's digest on its real path and (size, mtime_ns, ctime_ns, inode, device): any write to the
file changes its ctime, which no user tool can set back, so a hit is the same bytes.
Stored as JSON under ``$TDK_CACHE_DIR`` (default ``$XDG_CACHE_HOME/tdk`` or ``~/.cache/tdk``);
a cache that cannot be read or written is ignored, never an error. An entry found to disagree
with the bytes (an edited cache: ``forget``) is dropped and its file hashed again; the cache is
only ever replaced whole (a private file renamed over it), so two publishes at once each leave
a whole cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from pathlib import Path

from packager.stores.base import sha256_file
from packager.userdirs import cache_dir
from tdk import bounded
from tdk.errors import TdkError

CACHE_FILE = "file-sha256.json"
MAX_ENTRIES = 50_000  # oldest entries are dropped beyond this (~150 bytes each)
MAX_CACHE_BYTES = 64 * 1024 * 1024  # far above MAX_ENTRIES' worth: larger is not ours
Stamp = tuple[int, int, int, int, int]
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _entry(raw: object) -> tuple[Stamp, str] | None:
    """A cache entry ``[[size, mtime_ns, ctime_ns, inode, device], sha256]``, or None."""
    if not (isinstance(raw, list) and len(raw) == 2 and isinstance(raw[1], str)):
        return None
    stamp = raw[0]
    if not (isinstance(stamp, list) and len(stamp) == 5):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in stamp):
        return None
    return (stamp[0], stamp[1], stamp[2], stamp[3], stamp[4]), raw[1]


def _stamp(info: os.stat_result) -> Stamp:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class FileDigests:
    """The digests of one run: each file hashed at most once, the stat cache consulted first."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or cache_dir()) / CACHE_FILE
        #: path -> the entry as stored (JSON-shaped), checked by ``_entry`` only when looked up:
        #: a cache of tens of thousands of files costs one ``json.loads``, not a pass over each
        self._known: dict[str, object] = self._load()
        self._run: dict[str, str] = {}
        self._cached: set[str] = set()  # real paths whose digest this run came from the cache
        self._lock = threading.Lock()
        self._changed = False  # nothing new: save() writes nothing
        self.hashed_bytes = 0  # bytes read to hash in this run (the cache's misses)

    def _load(self) -> dict[str, object]:
        """The cached entries; a cache too large, malformed or unreadable is ignored."""
        try:
            payload = bounded.load_json(self.path, "", limit=MAX_CACHE_BYTES, depth=8)
            files = payload["files"]
            if not isinstance(files, dict):
                return {}
        except (TdkError, OSError, KeyError, TypeError):
            return {}
        return files

    def sha256(self, path: Path) -> str:
        real = str(path.resolve())
        with self._lock:
            if real in self._run:
                return self._run[real]
        stamp = _stamp(os.stat(real))
        cached = _entry(self._known.get(real))
        hit = cached is not None and cached[0] == stamp and _SHA256.fullmatch(cached[1])
        if hit:
            assert cached is not None
            digest = cached[1]
        else:
            digest = sha256_file(Path(real))
            if _stamp(os.stat(real)) != stamp:  # written while we read: do not remember it
                return digest
            self.hashed_bytes += stamp[0]
        with self._lock:
            self._run[real] = digest
            if hit:
                self._cached.add(real)
            self._remember(real, stamp, digest)
        return digest

    def from_cache(self, path: Path) -> bool:
        """Whether this run took ``path``'s digest from the cache (not from its bytes)."""
        with self._lock:
            return str(path.resolve()) in self._cached

    def forget(self, path: Path) -> None:
        """Drop ``path``'s entry (it disagreed with the file's bytes): the next lookup hashes
        the file again, and the next ``save`` writes the cache without the entry."""
        real = str(path.resolve())
        with self._lock:
            self._run.pop(real, None)
            self._cached.discard(real)
            if self._known.pop(real, None) is not None:
                self._changed = True

    def _remember(self, real: str, stamp: Stamp, digest: str) -> None:
        """Store an entry as the cache file holds it, newest last (the lock is held)."""
        entry = [list(stamp), digest]
        if self._known.get(real) != entry:
            self._known.pop(real, None)
            self._known[real] = entry
            self._changed = True

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
            self._cached.discard(real)  # from the bytes just read
            self._remember(real, stamp, digest)

    def save(self) -> None:
        """Write the cache back (atomically) when this run added to it; errors are ignored."""
        with self._lock:
            if not self._changed:
                return
            entries = list(self._known.items())[-MAX_ENTRIES:]
            self._changed = False
        payload = {"format_version": 1, "files": dict(entries)}
        text = json.dumps(payload, separators=(",", ":"))  # json's C encoder; dump() is not
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tdk-cache-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
