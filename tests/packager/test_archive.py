"""Archives: deterministic bytes, shared compressed members, readable by tarfile and GNU tar."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from packager.archive import LARGE, ArchiveWriter, Entry
from packager.inputs import scan_model_dir
from tdk.errors import UnsafeInputError


def _model(tmp_path: Path, weight_size: int = 3 * LARGE + 123) -> Path:
    model = tmp_path / "bert"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text('name: "bert"\n')
    (model / "1" / "model.onnx").write_bytes(os.urandom(weight_size))
    (model / "1" / "vocab.txt").write_text("a\nb\n")
    return model


def _entries(model: Path, name: str) -> list[Entry]:
    dirs, files = scan_model_dir(model, skip=("config.pbtxt",))
    entries = [Entry(name), Entry(f"{name}/config.pbtxt", data=f'name: "{name}"\n'.encode())]
    entries += [Entry(f"{name}/{d}") for d in dirs]
    entries += [Entry(f"{name}/{f.rel}", source=f) for f in files]
    return sorted(entries, key=lambda e: e.arcname)


def test_same_input_gives_identical_bytes(tmp_path: Path) -> None:
    model = _model(tmp_path)
    with ArchiveWriter() as writer:
        writer.write(_entries(model, "bert-0"), tmp_path / "a.tar.gz")
    os.utime(model / "1" / "model.onnx", (1, 1))  # mtimes must not matter
    with ArchiveWriter() as writer:
        writer.write(_entries(model, "bert-0"), tmp_path / "b.tar.gz")
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()


def test_copies_reuse_members_and_read_back(tmp_path: Path) -> None:
    model = _model(tmp_path)
    weights = (model / "1" / "model.onnx").read_bytes()
    with ArchiveWriter() as writer:
        sizes = [
            writer.write(_entries(model, f"bert-{i}"), tmp_path / f"bert-{i}.tar.gz")
            for i in range(3)
        ]
    assert max(sizes) - min(sizes) < 64  # only the small per-copy members differ
    for i in range(3):
        path = tmp_path / f"bert-{i}.tar.gz"
        with tarfile.open(path) as archive:
            names = archive.getnames()
            assert names == [
                f"bert-{i}",
                f"bert-{i}/1",
                f"bert-{i}/1/model.onnx",
                f"bert-{i}/1/vocab.txt",
                f"bert-{i}/config.pbtxt",
            ]
            member = archive.getmember(f"bert-{i}/1/model.onnx")
            assert (member.mtime, member.uid, member.uname, member.mode) == (0, 0, "", 0o644)
            extracted = archive.extractfile(member)
            assert extracted is not None and extracted.read() == weights
            config = archive.extractfile(f"bert-{i}/config.pbtxt")
            assert config is not None and config.read() == f'name: "bert-{i}"\n'.encode()
        listing = subprocess.run(
            ["tar", "-tzf", str(path)], capture_output=True, text=True, check=True
        )
        assert f"bert-{i}/1/model.onnx" in listing.stdout.split()
        assert gzip.decompress(path.read_bytes())  # a multi-member gzip stream, read as one


def test_compresses_well_on_redundant_data(tmp_path: Path) -> None:
    model = tmp_path / "m"
    (model / "1").mkdir(parents=True)
    (model / "1" / "model.onnx").write_bytes(b"\x00\x01\x02\x03" * (2 * LARGE))
    with ArchiveWriter() as writer:
        size = writer.write(_entries(model, "m-0"), tmp_path / "m.tar.gz")
    assert size < LARGE // 10


@pytest.mark.parametrize("kind", ["link_inside", "link_outside", "fifo"])
def test_unsafe_entries_are_refused(tmp_path: Path, kind: str) -> None:
    model = _model(tmp_path, weight_size=10)
    if kind == "link_inside":
        (model / "1" / "alias.onnx").symlink_to(model / "1" / "model.onnx")
    elif kind == "link_outside":
        (model / "1" / "passwd").symlink_to("/etc/passwd")
    else:
        os.mkfifo(model / "1" / "pipe")
    with pytest.raises(UnsafeInputError) as info:
        scan_model_dir(model)
    assert str(model / "1") in info.value.message


def test_sha_is_stable_across_writers(tmp_path: Path) -> None:
    model = _model(tmp_path, weight_size=LARGE * 2)
    digests = set()
    for threads in (1, 4):
        with ArchiveWriter(threads=threads) as writer:
            path = tmp_path / f"t{threads}.tar.gz"
            writer.write(_entries(model, "bert-0"), path)
            digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    assert len(digests) == 1


def test_package_keeps_open_files_bounded_whatever_the_copy_count(
    sample_repo: Path, tmp_path: Path
) -> None:
    """300 copies under a 64-file limit: every archive is closed once written (it used to keep
    one open file per archive and die with EMFILE and a traceback)."""
    import resource
    import sys

    def low_limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))

    dest = tmp_path / "release"
    tdk = Path(sys.executable).parent / "tdk"
    model = sample_repo / "tokenizer"
    done = subprocess.run(
        [
            str(tdk),
            "package",
            str(model),
            "--copies",
            "300",
            "--release",
            f"file://{dest}",
            "--json",
        ],
        preexec_fn=low_limit,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((dest / "mme").glob("*.tar.gz"))) == 300
    assert (dest / "manifest.json").is_file()
