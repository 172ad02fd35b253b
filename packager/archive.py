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
import stat
import tarfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from isal import igzip

from tdk.errors import UnsafeInputError

BLOCK = 512
CHUNK = 16 * 1024 * 1024  # a large file is compressed as independent members of this size
LARGE = 1024 * 1024  # files from this size on are compressed once and shared across copies
DEFAULT_LEVEL = 2  # ISA-L levels are 0-3; 2 is within a few percent of gzip -6 on weights


@dataclass(frozen=True)
class SourceFile:
    """A regular file of a model directory: its path relative to the model and on disk."""

    rel: str
    path: Path
    size: int
    executable: bool
    links: int = 1  # st_nlink: above 1, another name (maybe outside the repository) shares it
    inode: tuple[int, int] = (0, 0)  # (st_dev, st_ino): names of one file share it


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


def name_problem(name: str) -> str | None:
    """Why a file or directory name cannot be packaged (a reader refuses it), or None."""
    if "\\" in name:
        return "has a backslash in its name (Windows readers and the endpoint take it for a path)"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return f"has a control character in its name ({name!r})"
    return None


def scan_model_dir(root: Path, skip: Sequence[str] = ()) -> tuple[list[str], list[SourceFile]]:
    """Directories and regular files under ``root``, sorted; refuses anything else.

    Symlinks (whether they stay inside the tree or not), fifos, sockets, devices, what this
    user cannot read and names a reader would refuse raise UnsafeInputError naming every
    offending path, so nothing unsafe enters an archive and nothing is silently left out.
    """
    dirs: list[str] = []
    files: list[SourceFile] = []
    problems: list[str] = []
    if root.is_symlink():
        problems.append(f"{root} is a symbolic link (to {os.readlink(root)})")
    elif not os.access(root, os.R_OK | os.X_OK):
        problems.append(f"{root} cannot be read (permission denied)")

    def unreadable(exc: OSError) -> None:
        problems.append(f"{exc.filename} cannot be read ({exc.strerror})")

    for current, subdirs, names in os.walk(root, onerror=unreadable, followlinks=False):
        base = Path(current)
        refused: set[str] = set()
        for name in sorted(subdirs + names):
            problem = _classify(root, base / name, skip, dirs, files)
            if problem:
                problems.append(problem)
                refused.add(name)
        subdirs[:] = [d for d in subdirs if d not in refused]  # links, unreadable: not entered
    if problems:
        raise UnsafeInputError(
            f"{root}: {len(problems)} entr{'y' if len(problems) == 1 else 'ies'} cannot be "
            "packaged:\n  " + "\n  ".join(problems),
            hint="replace links with the files themselves, remove special files, rename what "
            "has a backslash or control character, and make every file readable (chmod u+r, "
            "and u+rx on directories)",
        )
    return sorted(dirs), sorted(files, key=lambda f: f.rel)


def _classify(
    root: Path, path: Path, skip: Sequence[str], dirs: list[str], files: list[SourceFile]
) -> str | None:
    """Add ``path`` to ``dirs`` or ``files``, or say why it cannot be packaged."""
    rel = path.relative_to(root).as_posix()
    info = path.lstat()
    bad_name = name_problem(path.name)
    if bad_name:
        return f"{path} {bad_name}"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link (to {os.readlink(path)})"
    if stat.S_ISDIR(info.st_mode):
        if not os.access(path, os.R_OK | os.X_OK):
            return f"{path} cannot be read (permission denied)"
        dirs.append(rel)
    elif stat.S_ISREG(info.st_mode):
        if rel in skip:
            return None
        if not os.access(path, os.R_OK):
            return f"{path} cannot be read (permission denied)"
        executable = bool(info.st_mode & 0o111)
        inode = (info.st_dev, info.st_ino)
        files.append(SourceFile(rel, path, info.st_size, executable, info.st_nlink, inode))
    else:
        return f"{path} is not a regular file or directory"
    return None


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


def outside_links(files: Sequence[SourceFile]) -> list[str]:
    """Files with more names than ``files`` holds: another name lies outside the inputs, and
    whatever is written through it is what would get packaged."""
    names: dict[tuple[int, int], int] = {}
    for f in files:
        names[f.inode] = names.get(f.inode, 0) + 1
    return [
        f"{f.path} has {f.links} hard links, {f.links - names[f.inode]} of them outside the "
        "models being packaged"
        for f in files
        if f.links > names[f.inode]
    ]


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
    ) -> None:
        """``on_digest(path, sha256, stat_before)`` receives each source file's digest,
        computed from the bytes read to archive it (so nothing reads it again to hash it)."""
        self.level = level
        self.on_digest = on_digest
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
        with source.path.open("rb") as handle:
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
                yield chunk if remaining else chunk + _padding(source.size)
        if self.on_digest is not None:
            self.on_digest(source.path, digest.hexdigest(), before)

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
        with source.path.open("rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read()
        _check_size(source, data)
        if self.on_digest is not None:
            self.on_digest(source.path, hashlib.sha256(data).hexdigest(), before)
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
