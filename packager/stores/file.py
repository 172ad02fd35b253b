"""The ``file://`` store: a directory on a local filesystem, written atomically."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from packager.archive import copy_range
from packager.stores.base import Progress, Store, _noop, sha256_file


class FileStore(Store):
    """A directory on this machine (``file:///abs/path`` or a plain path)."""

    def __init__(self, url: str, root: Path) -> None:
        super().__init__(url)
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def sha256_of(self, key: str) -> str | None:
        path = self._path(key)
        return sha256_file(path) if path.is_file() else None

    def _atomic_write(self, key: str, write: Callable[[Path], None]) -> None:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tdk-", dir=target.parent)
            os.close(fd)
            try:
                write(Path(tmp))
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as exc:
            raise self._error("write", key, exc) from exc

    def staging_root(self) -> Path | None:
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root

    def put_file(
        self, key: str, path: Path, sha256: str, progress: Progress = _noop, move: bool = False
    ) -> None:
        size = path.stat().st_size
        if move and path.stat().st_dev == self.root.stat().st_dev:
            self._atomic_write(key, lambda tmp: os.replace(path, tmp))
        else:

            def copy(tmp: Path) -> None:
                with path.open("rb") as src, tmp.open("wb") as dst:
                    copy_range(src.fileno(), dst.fileno(), 0, size)

            self._atomic_write(key, copy)
        progress(size)

    def copy(self, source_key: str, key: str, sha256: str) -> None:
        # Release files are only ever replaced, never rewritten in place, so equal content can
        # share one inode: N copies of the same weights cost one write.
        source = self._path(source_key)

        def link(tmp: Path) -> None:
            tmp.unlink()
            os.link(source, tmp)

        self._atomic_write(key, link)

    def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        self._atomic_write(key, lambda tmp: _write_bytes(tmp, data))

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except OSError as exc:
            raise self._error("read", key, exc) from exc

    def download(self, key: str, dest: Path, progress: Progress = _noop) -> None:
        source = self._path(key)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".part")
            shutil.copyfile(source, tmp)
            progress(tmp.stat().st_size)
            os.replace(tmp, dest)
        except OSError as exc:
            raise self._error("read", key, exc) from exc

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise self._error("delete", key, exc) from exc

    def list_keys(self, prefix: str) -> list[str]:
        base = self._path(prefix)
        if not base.is_dir():
            return []
        found = (p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".tdk-"))
        return sorted(p.relative_to(self.root).as_posix() for p in found)


def _write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)
