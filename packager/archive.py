"""Deterministic, fast ``.tar.gz`` archives whose unchanged large files are compressed once.

A gzip file may be several members back to back (RFC 1952) and every reader (GNU tar, Python's
``tarfile``/``gzip``, SageMaker) reads them as one stream. So a large file's tar data is
compressed once, in parallel chunks, into a spool, and every copy's archive reuses those bytes;
only the small per-copy parts (tar headers, the renamed ``config.pbtxt``) are compressed per copy.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from isal import igzip

from packager.inputs import SourceFile
from tdk.errors import UnsafeInputError

BLOCK = 512
CHUNK = 16 * 1024 * 1024  # a large file is compressed as independent members of this size
LARGE = 1024 * 1024  # files from this size on are compressed once and shared across copies
DEFAULT_LEVEL = 2  # ISA-L levels are 0-3; 2 is within a few percent of gzip -6 on weights


@dataclass(frozen=True)
class Entry:
    """One archive entry: a directory, a file from disk, or bytes (the rewritten config)."""

    arcname: str
    source: SourceFile | None = None
    data: bytes | None = None
    executable: bool = False

    @property
    def is_dir(self) -> bool:
        return self.source is None and self.data is None


def _header(arcname: str, size: int, is_dir: bool, executable: bool) -> bytes:
    info = tarfile.TarInfo(arcname + ("/" if is_dir else ""))
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.mode = 0o755 if is_dir or executable else 0o644
    info.size = 0 if is_dir else size
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="strict")


def _padding(size: int) -> bytes:
    return b"\0" * (-size % BLOCK)


@dataclass(frozen=True)
class Taken:
    """A private copy of an input file, made from the bytes read (and hashed) to archive it."""

    copy: Path
    sha256: str
    before: os.stat_result  # the input's status when that read began

    def fits(self, source: Path, sha256: str) -> bool:
        """Whether the copy stands for ``source`` now: the same bytes' sha256, and the input
        unchanged (size, modification time, inode) since it was read."""
        now = os.stat(source)
        same = (now.st_size, now.st_mtime_ns, now.st_ino, now.st_dev) == (
            self.before.st_size, self.before.st_mtime_ns, self.before.st_ino, self.before.st_dev
        )  # fmt: skip
        return same and sha256 == self.sha256


@dataclass(frozen=True)
class _Segment:
    """Compressed bytes already written to an archive: ``length`` bytes from ``offset``."""

    path: Path
    offset: int
    length: int


class ArchiveWriter:
    """Writes archives; a large file is compressed into the first archive that holds it and
    later archives copy those bytes from there, inside the kernel where it can.

    Every archive is closed once written, so open files stay bounded whatever the number of
    archives; a later archive reopens the earlier one by path for the bytes it reuses.
    """

    def __init__(
        self,
        level: int = DEFAULT_LEVEL,
        threads: int | None = None,
        on_digest: Callable[[Path, str, os.stat_result], None] | None = None,
        tee: Path | None = None,
    ) -> None:
        """``on_digest(path, sha256, stat_before)`` receives each source file's digest,
        computed from the bytes read to archive it (so nothing reads it again to hash it);
        with ``tee`` (a private directory), those bytes are also copied there, once per source
        file, and listed in ``taken``: the snapshot its repository/ upload is made from."""
        self.level = level
        self.on_digest = on_digest
        self.tee = tee
        self.taken: dict[Path, Taken] = {}
        self._workers = threads or min(8, os.cpu_count() or 2)
        self._pool = ThreadPoolExecutor(max_workers=self._workers)
        self._segments: dict[tuple[str, int, int], list[_Segment]] = {}

    def close(self) -> None:
        self._pool.shutdown()

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _member(self, data: bytes) -> bytes:
        return igzip.compress(data, self.level, mtime=0)

    def _chunks(self, source: SourceFile) -> Iterator[bytes]:
        digest = hashlib.sha256()
        with source.path.open("rb") as handle, self._tee(source) as tee:
            before = os.fstat(handle.fileno())
            remaining = source.size
            while remaining > 0:
                chunk = handle.read(min(CHUNK, remaining))
                if not chunk:
                    raise UnsafeInputError(
                        f"{source.path} shrank while it was being packaged",
                        hint="do not modify the repository while `tdk package` runs",
                    )
                remaining -= len(chunk)
                digest.update(chunk)
                if tee is not None:
                    tee[0].write(chunk)
                yield chunk if remaining else chunk + _padding(source.size)
        self._digested(source, digest.hexdigest(), before, tee)

    @contextmanager
    def _tee(self, source: SourceFile) -> Iterator[tuple[BinaryIO, Path] | None]:
        """A new file in ``tee`` for ``source``'s bytes (and its path), None without ``tee``
        or once taken."""
        if self.tee is None or source.path in self.taken:
            yield None
            return
        handle, name = tempfile.mkstemp(prefix="snap-", dir=self.tee)
        with os.fdopen(handle, "wb") as copy:
            yield copy, Path(name)

    def _digested(
        self,
        source: SourceFile,
        sha: str,
        before: os.stat_result,
        tee: tuple[BinaryIO, Path] | None,
    ) -> None:
        if tee is not None:
            self.taken[source.path] = Taken(tee[1], sha, before)
        if self.on_digest is not None:
            self.on_digest(source.path, sha, before)

    def _compress_into(self, source: SourceFile, out: BinaryIO, dest: Path) -> list[_Segment]:
        """Compress ``source`` chunk by chunk (in parallel, bounded window) into ``out``."""
        segments: list[_Segment] = []
        window: deque[Future[bytes]] = deque()

        def drain_one() -> None:
            member = window.popleft().result()
            segments.append(_Segment(dest, out.tell(), len(member)))
            out.write(member)

        for chunk in self._chunks(source):
            window.append(self._pool.submit(self._member, chunk))
            if len(window) > self._workers:
                drain_one()
        while window:
            drain_one()
        out.flush()
        return segments

    def _large(self, source: SourceFile, out: BinaryIO, dest: Path) -> int:
        info = source.path.stat()
        key = (str(source.path), info.st_size, info.st_mtime_ns)
        segments = self._segments.get(key)
        if segments is None:
            self._segments[key] = segments = self._compress_into(source, out, dest)
            return sum(segment.length for segment in segments)
        out.flush()
        with segments[0].path.open("rb") as earlier:  # one archive holds all of them
            for segment in segments:
                copy_range(earlier.fileno(), out.fileno(), segment.offset, segment.length)
        out.seek(0, io.SEEK_END)
        return sum(segment.length for segment in segments)

    def write(self, entries: Sequence[Entry], dest: Path) -> int:
        """Write the archive of ``entries`` (already sorted) to ``dest``; returns its size.

        Later archives reuse bytes written to ``dest``, so it must stay at that path, unchanged,
        until ``close``.
        """
        with dest.open("w+b") as out:
            return self._write(entries, out, dest)

    def _write(self, entries: Sequence[Entry], out: BinaryIO, dest: Path) -> int:
        small = bytearray()
        for entry in entries:
            if entry.is_dir:
                small += _header(entry.arcname, 0, True, False)
            elif entry.data is not None:
                small += _header(entry.arcname, len(entry.data), False, entry.executable)
                small += entry.data + _padding(len(entry.data))
            else:
                assert entry.source is not None
                source = entry.source
                small += _header(entry.arcname, source.size, False, source.executable)
                if source.size >= LARGE:
                    out.write(self._member(bytes(small)))
                    small.clear()
                    self._large(source, out, dest)
                else:
                    small += self._read_small(source) + _padding(source.size)
        small += b"\0" * (2 * BLOCK)
        out.write(self._member(bytes(small)))
        out.flush()
        return out.tell()

    def _read_small(self, source: SourceFile) -> bytes:
        with source.path.open("rb") as handle, self._tee(source) as tee:
            before = os.fstat(handle.fileno())
            data = handle.read()
            _check_size(source, data)
            if tee is not None:
                tee[0].write(data)
        self._digested(source, hashlib.sha256(data).hexdigest(), before, tee)
        return data


def _check_size(source: SourceFile, data: bytes) -> None:
    if len(data) != source.size:
        raise UnsafeInputError(
            f"{source.path} changed size while it was being packaged",
            hint="do not modify the repository while `tdk package` runs",
        )


def copy_range(src_fd: int, dst_fd: int, offset: int, length: int) -> None:
    """Append ``length`` bytes of ``src_fd`` at ``offset`` to ``dst_fd``, in-kernel if it can."""
    end = offset + length
    try:
        while offset < end:
            copied = os.copy_file_range(src_fd, dst_fd, end - offset, offset)
            if copied == 0:
                raise OSError("copy_file_range copied nothing")
            offset += copied
    except OSError:
        while offset < end:  # other filesystems or kernels: plain reads and writes
            data = os.pread(src_fd, min(CHUNK, end - offset), offset)
            os.write(dst_fd, data)
            offset += len(data)
