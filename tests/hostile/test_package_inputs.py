"""Issue 25 items 4, 8 and 10 (packager): hostile or broken inputs to `tdk package` are refused
with the path and the fix, nothing outside the repository is published, and what the store gets
is what the manifest says."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.publish import publish
from packager.stores import open_store
from tdk.errors import UnsafeInputError

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def model(tmp_path: Path, sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    return Path(shutil.copytree(sample_repo / "tokenizer", tmp_path / "repo" / "tokenizer"))


def _package(repo: Path, dest: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["package", str(repo), "--release", f"file://{dest}", *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, " ".join(result.output.split())


def _nothing_published(dest: Path) -> bool:
    return not (dest / "manifest.json").exists() and not list(dest.glob("mme/*"))


def test_a_symlinked_model_directory_is_refused(model: Path, tmp_path: Path) -> None:
    """`ln -s /elsewhere repo/evil` published /elsewhere (an id_rsa) as evil-0.tar.gz."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(model, elsewhere)
    (elsewhere / "1" / "id_rsa").write_text("PRIVATE KEY\n")
    config = elsewhere / "config.pbtxt"
    config.write_text(config.read_text().replace('name: "tokenizer"', 'name: "evil"'))
    (model.parent / "evil").symlink_to(elsewhere)
    code, output = _package(model.parent, tmp_path / "r")
    assert code != 0
    assert f"{model.parent / 'evil'} is a symbolic link" in output and "hint:" in output
    assert _nothing_published(tmp_path / "r")


def _deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """What another user meets at ``chmod 000`` (tests run as root, whom mode bits do not
    stop): os.access says no, and listing the directory fails with EACCES."""
    real_access, real_scandir, real_listdir = os.access, os.scandir, os.listdir

    def refuse(path: object) -> None:
        if Path(str(path)) == denied:
            raise PermissionError(13, "Permission denied", str(path))

    def access(path: object, mode: int, **kwargs: object) -> bool:
        return Path(str(path)) != denied and real_access(path, mode, **kwargs)  # type: ignore[arg-type]

    def scandir(path: object = ".") -> object:
        refuse(path)
        return real_scandir(path)  # type: ignore[call-overload]

    def listdir(path: object = ".") -> list[str]:
        refuse(path)
        return real_listdir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "listdir", listdir)


@pytest.mark.parametrize("command", ["package", "validate"])
@pytest.mark.parametrize("what", ["file", "subdirectory", "version-directory"])
def test_unreadable_inputs_are_refused_not_dropped(
    what: str, command: str, model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (model / "1" / "assets").mkdir()
    (model / "1" / "assets" / "vocab.txt").write_text("a b c\n")
    denied = {
        "file": model / "1" / "assets" / "vocab.txt",
        "subdirectory": model / "1" / "assets",
        "version-directory": model / "1",
    }[what]
    _deny(monkeypatch, denied)
    if command == "validate":
        result = runner.invoke(app, ["validate", str(model)])
        assert result.exception is None or isinstance(result.exception, SystemExit)
        code, output = result.exit_code, " ".join(result.output.split())
    else:
        code, output = _package(model, tmp_path / "r")
    assert code != 0
    assert f"{denied} cannot be read" in output and "chmod" in output
    assert output.count(f"{denied} cannot be read") == 1
    assert _nothing_published(tmp_path / "r")


@pytest.mark.parametrize("name", ["back\\slash.txt", "new\nline.txt", "tab\tname.txt"])
def test_names_the_endpoint_refuses_are_refused_at_package_time(
    name: str, model: Path, tmp_path: Path
) -> None:
    (model / "1" / name).write_text("x\n")
    code, output = _package(model, tmp_path / "r")
    assert code != 0
    assert "cannot be packaged" in output and "rename" in output
    assert _nothing_published(tmp_path / "r")


CACHES: dict[str, Callable[[Path], object]] = {
    "not-json": lambda p: p.write_text("{"),
    "files-a-list": lambda p: p.write_text(json.dumps({"files": [1, 2]})),
    "entry-a-number": lambda p: p.write_text(json.dumps({"files": {"/x": 3}})),
    "stamp-wrong": lambda p: p.write_text(json.dumps({"files": {"/x": [[1, "a"], "sha"]}})),
    "payload-a-list": lambda p: p.write_text("[]"),
    "deeply-nested": lambda p: p.write_text("[" * 200_000 + "]" * 200_000),
    "not-utf8": lambda p: p.write_bytes(b'{"files": "\xff"}'),
}


@pytest.mark.parametrize("kind", sorted(CACHES))
def test_a_malformed_digest_cache_is_ignored(kind: str, model: Path, tmp_path: Path) -> None:
    """The digest cache's docstring promises a broken cache is ignored, never an error."""
    cache = tmp_path / "cache" / "file-sha256.json"
    cache.parent.mkdir(parents=True)
    CACHES[kind](cache)
    code, output = _package(model, tmp_path / "r")
    assert code == 0, output
    assert (tmp_path / "r" / "manifest.json").is_file()


def test_repository_files_are_the_bytes_that_were_hashed(model: Path, tmp_path: Path) -> None:
    """A file edited during a publish landed in repository/ but not in the archive or the
    manifest's sha256. Now the publish stops before the edited bytes reach the store (the
    inputs are snapshotted after the comparison, before the store changes)."""
    source = model / "1" / "model.py"
    original = source.read_bytes()

    def phase(description: str, total: int, unit: str = "") -> Callable[[int], None]:
        if description.startswith("comparing"):
            source.write_bytes(original.replace(b"import", b"#mport", 1))
        return lambda _: None

    dest = tmp_path / "r"
    with pytest.raises(UnsafeInputError, match="changed while it was being packaged"):
        publish([model], open_store(f"file://{dest}"), copies=1, phase=phase)
    assert not (dest / "manifest.json").exists()
    for path in dest.glob("repository/**/model.py"):
        assert path.read_bytes() == original


def test_published_repository_files_match_the_archive(model: Path, tmp_path: Path) -> None:
    dest = tmp_path / "r"
    result = publish([model], open_store(f"file://{dest}"), copies=1)
    entry = result.manifest.models[0]
    with tarfile.open(dest / entry.archive) as archive:
        for rel, sha in entry.files.items():
            stored = (dest / "repository" / rel).read_bytes()
            assert hashlib.sha256(stored).hexdigest() == sha
            member = archive.extractfile(rel)
            assert member is not None and member.read() == stored
