"""Issue 47 item 8: `tdk package` reads each input file once. The snapshot that makes the store
get exactly the hashed bytes read and hashed every input again, once per copy (5 copies of a
200 MB model: 1 GB more read, hashed and written); now the archive writer copies the bytes it
reads and hashes into the stage, and the repository/ upload is made from that copy."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from packager.archive import LARGE
from packager.publish import publish
from packager.stores import open_store

CONFIG = """name: "big"
backend: "python"
max_batch_size: 8
input { name: "x" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "y" data_type: TYPE_FP32 dims: [ 4 ] }
"""
_opened: list[str] | None = None  # paths opened while a test listens
_installed = False


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], str | Path):
        _opened.append(os.path.realpath(str(args[0])))


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every file this process opens until the test ends (a Python audit hook)."""
    global _opened, _installed
    if not _installed:
        sys.addaudithook(_hook)  # hooks cannot be removed: it listens only while a test asks
        _installed = True
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


def _repo(root: Path) -> Path:
    model = root / "repo" / "big"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(CONFIG)
    (model / "1" / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    (model / "1" / "weights.bin").write_bytes(os.urandom(3 * LARGE + 12345))
    return root / "repo"


@pytest.mark.parametrize("copies", [1, 5])
def test_a_large_input_is_read_once_and_published_as_read(
    copies: int, tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))  # cold: nothing known
    repo = _repo(tmp_path)
    weights = os.path.realpath(repo / "big" / "1" / "weights.bin")
    release = tmp_path / "release"
    opened.clear()  # writing the repository opened it
    result = publish([repo], open_store(f"file://{release}"), copies=copies)
    assert opened.count(weights) == 1, opened.count(weights)
    expected = hashlib.sha256((repo / "big" / "1" / "weights.bin").read_bytes()).hexdigest()
    for entry in result.manifest.models:
        rel = f"{entry.name}/1/weights.bin"
        assert entry.files[rel] == expected
        assert hashlib.sha256((release / "repository" / rel).read_bytes()).hexdigest() == expected


def test_an_input_changed_after_it_was_read_is_read_again_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy taken while archiving stands for the input only while the input is unchanged;
    an edit after it (before the upload) is caught by the one read that follows."""
    from packager.build import build_release
    from packager.publish import load_models
    from packager.rename import lay_out_copies
    from packager.uploads import snapshot_all
    from tdk.errors import UnsafeInputError

    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    repo = _repo(tmp_path)
    stage = tmp_path / "stage"
    stage.mkdir()
    from packager.digests import FileDigests

    digests = FileDigests()
    built = build_release(lay_out_copies(load_models([repo]), 2), stage, 1, digests=digests)
    weights = repo / "big" / "1" / "weights.bin"
    assert weights in built.taken
    weights.write_bytes(os.urandom(weights.stat().st_size))
    live = [u for u in built.uploads if u.live]
    with pytest.raises(UnsafeInputError, match="changed while it was being packaged"):
        snapshot_all(live, stage, digests, built.taken)
