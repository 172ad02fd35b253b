"""The digest cache: written back only when a run learnt something, entries checked when used."""

from __future__ import annotations

import json
from pathlib import Path

from packager.digests import CACHE_FILE, FileDigests


def test_a_run_that_learnt_nothing_does_not_rewrite_the_cache(tmp_path: Path) -> None:
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights")
    first = FileDigests(tmp_path / "cache")
    digest = first.sha256(model)
    first.save()
    cache = tmp_path / "cache" / CACHE_FILE
    written = cache.stat().st_ino  # save() replaces the file: a new inode each time it writes
    again = FileDigests(tmp_path / "cache")
    assert again.sha256(model) == digest and again.hashed_bytes == 0  # a hit
    again.save()
    assert cache.stat().st_ino == written


def test_a_malformed_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights")
    cache = tmp_path / "cache" / CACHE_FILE
    cache.parent.mkdir()
    bad = {"format_version": 1, "files": {str(model.resolve()): [[1, 2, "x", 4, 5], "f" * 64]}}
    cache.write_text(json.dumps(bad))
    digests = FileDigests(tmp_path / "cache")
    assert digests.sha256(model) != "f" * 64 and digests.hashed_bytes == len(b"weights")
    digests.save()
    stored = json.loads(cache.read_text())["files"][str(model.resolve())]
    assert stored[1] == digests.sha256(model) and all(isinstance(v, int) for v in stored[0])
