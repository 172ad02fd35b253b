"""Publishing to a file:// store: layout, manifest last, idempotence, nothing half-written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from packager.manifest import Manifest
from packager.publish import publish
from packager.stores import FileStore, open_store
from tdk.errors import StoreError, TdkError, UnsafeInputError, UsageError


def _repo_copy(sample_repo: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(sample_repo, repo)
    return repo


def test_release_layout_and_manifest(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    result = publish([sample_repo], open_store(f"file://{dest}"), copies=2)
    manifest = Manifest.from_json((dest / "manifest.json").read_text())
    assert result.manifest_written
    assert len(manifest.models) == 8  # 4 models x 2 copies
    entry = manifest.by_target_model("text_classifier-1.tar.gz")
    archive = dest / entry.archive
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == entry.sha256
    assert archive.stat().st_size == entry.size
    assert entry.backend == "onnxruntime" and entry.max_batch_size >= 8
    assert [(s.name, s.datatype, s.dims) for s in entry.inputs] == [
        ("token_ids", "INT32", (128,)),
        ("attn_mask", "INT32", (128,)),
    ]
    with tarfile.open(archive) as tar:
        assert all(n.startswith("text_classifier-1") for n in tar.getnames())
    for rel, sha in entry.files.items():
        assert hashlib.sha256((dest / "repository" / rel).read_bytes()).hexdigest() == sha
    config = (dest / "repository" / "text_classifier-1" / "config.pbtxt").read_text()
    assert 'name: "text_classifier-1"' in config
    pipeline = manifest.by_target_model("text_pipeline-0.tar.gz")
    assert pipeline.contains[-1] == "text_pipeline-0"
    assert (dest / "repository" / "text_pipeline-0.tokenizer" / "1" / "model.py").is_file()


def test_republishing_unchanged_release_uploads_nothing(sample_repo: Path, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'release'}"
    first = publish([sample_repo], open_store(url), copies=2)
    manifest_bytes = (tmp_path / "release" / "manifest.json").read_bytes()
    second = publish([sample_repo], open_store(url), copies=2)
    assert first.uploaded_bytes > 0
    assert second.uploaded == [] and second.uploaded_bytes == 0
    assert (tmp_path / "release" / "manifest.json").read_bytes() == manifest_bytes


def test_changed_model_uploads_only_what_changed(sample_repo: Path, tmp_path: Path) -> None:
    repo = _repo_copy(sample_repo, tmp_path)
    url = f"file://{tmp_path / 'release'}"
    publish([repo], open_store(url), copies=1)
    model_py = repo / "tokenizer" / "1" / "model.py"
    model_py.write_text(model_py.read_text() + "\n# changed\n")
    result = publish([repo], open_store(url), copies=1)
    assert "mme/tokenizer-0.tar.gz" in result.uploaded
    written = result.uploaded + result.copied  # equal contents: one upload, then copies
    assert "repository/tokenizer-0/1/model.py" in written
    assert set(result.uploaded).isdisjoint(result.copied)
    assert set(written).isdisjoint(result.skipped)
    assert "mme/image_classifier-0.tar.gz" not in result.uploaded


def test_stale_objects_are_reported_and_pruned(sample_repo: Path, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'release'}"
    publish([sample_repo], open_store(url), copies=2)
    result = publish([sample_repo], open_store(url), copies=1)
    assert "mme/text_classifier-1.tar.gz" in result.stale
    assert (tmp_path / "release" / "mme" / "text_classifier-1.tar.gz").exists()
    publish([sample_repo], open_store(url), copies=1, prune=True)
    assert not (tmp_path / "release" / "mme" / "text_classifier-1.tar.gz").exists()
    # No empty model directory is left for Triton to try to load.
    assert not (tmp_path / "release" / "repository" / "text_classifier-1").exists()


def _assert_nothing_published(dest: Path) -> None:
    assert not (dest / "manifest.json").exists()
    assert not (dest / "mme").exists()
    assert not list(dest.glob(".tdk-staging-*"))


@pytest.mark.parametrize("kind", ["symlink", "fifo", "bad_config", "empty"])
def test_hostile_or_broken_input_publishes_nothing(
    sample_repo: Path, tmp_path: Path, kind: str
) -> None:
    import os

    repo = _repo_copy(sample_repo, tmp_path)
    if kind == "symlink":
        (repo / "tokenizer" / "1" / "escape").symlink_to("/etc/passwd")
    elif kind == "fifo":
        os.mkfifo(repo / "tokenizer" / "1" / "pipe")
    elif kind == "bad_config":
        (repo / "tokenizer" / "config.pbtxt").write_text("name: [unterminated\n")
    else:
        shutil.rmtree(repo)
        repo.mkdir()
    dest = tmp_path / "release"
    dest.mkdir()
    expected = {
        "symlink": UnsafeInputError,
        "fifo": UnsafeInputError,
        "bad_config": TdkError,
        "empty": UsageError,
    }[kind]
    with pytest.raises(expected):
        publish([repo], open_store(f"file://{dest}"), copies=2)
    _assert_nothing_published(dest)


class _FailingStore(FileStore):
    """A file store whose third upload fails, like a network drop mid-release."""

    def __init__(self, root: Path) -> None:
        super().__init__(f"file://{root}", root)
        self.calls = 0

    def put_file(self, key, path, sha256, progress=lambda _: None, move=False):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 3:
            raise StoreError(f"cannot upload {self.describe(key)}: connection reset")
        super().put_file(key, path, sha256, progress, move)


def test_failed_upload_leaves_no_manifest(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    publish([sample_repo], open_store(f"file://{dest}"), copies=1)
    assert (dest / "manifest.json").exists()
    repo = _repo_copy(sample_repo, tmp_path)
    for model in ("tokenizer", "text_classifier", "image_classifier"):
        (repo / model / "1" / "labels.txt").write_text(f"labels of {model}\n")
    with pytest.raises(StoreError) as info:
        publish([repo], _FailingStore(dest), copies=1)
    assert "no manifest was written" in info.value.message
    assert not (dest / "manifest.json").exists()
    assert not list(dest.glob(".tdk-staging-*"))


def test_manifest_is_valid_json_with_format_version(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    publish([sample_repo], open_store(f"file://{dest}"), copies=1)
    payload = json.loads((dest / "manifest.json").read_text())
    assert payload["format_version"] == 1
    assert {m["target_model"] for m in payload["models"]} == {
        "text_classifier-0.tar.gz",
        "image_classifier-0.tar.gz",
        "tokenizer-0.tar.gz",
        "text_pipeline-0.tar.gz",
    }


def test_prune_removes_what_an_interrupted_publish_wrote(sample_repo: Path, tmp_path: Path) -> None:
    """The ledger records a publish's keys before it writes any, so objects of a publish cut
    off before its manifest are still known to be ours and pruned later."""
    dest = tmp_path / "release"
    publish([sample_repo], open_store(f"file://{dest}"), copies=1)
    with pytest.raises(StoreError):
        publish([sample_repo], _FailingStore(dest), copies=3)
    assert not (dest / "manifest.json").exists()
    written = {p.name for p in (dest / "mme").iterdir()}
    assert written - {f"{m}-0.tar.gz" for m in _MODELS}, "the failed publish wrote no archive"
    result = publish([sample_repo], open_store(f"file://{dest}"), copies=1, prune=True)
    assert sorted(p.name for p in (dest / "mme").iterdir()) == sorted(
        f"{m}-0.tar.gz" for m in _MODELS
    )
    assert set(result.stale) >= {f"mme/{name}" for name in written if "-0." not in name}
    assert not [
        p for p in (dest / "repository").iterdir() if not p.name.split(".")[0].endswith("-0")
    ]


_MODELS = ("image_classifier", "text_classifier", "text_pipeline", "tokenizer")


def test_unreadable_ledger_is_a_clear_error_and_nothing_is_deleted(
    sample_repo: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "release"
    publish([sample_repo], open_store(f"file://{dest}"), copies=2)
    (dest / "tdk-ledger.json").write_text("not json")
    before = sorted(p.relative_to(dest) for p in dest.rglob("*"))
    with pytest.raises(TdkError) as info:
        publish([sample_repo], open_store(f"file://{dest}"), copies=1, prune=True)
    assert "not a tdk ledger" in info.value.message and "tdk-ledger.json" in info.value.message
    assert sorted(p.relative_to(dest) for p in dest.rglob("*")) == before


def test_release_without_ledger_prunes_by_its_manifest(sample_repo: Path, tmp_path: Path) -> None:
    """Releases written before the ledger existed: the manifest says what is ours."""
    dest = tmp_path / "release"
    publish([sample_repo], open_store(f"file://{dest}"), copies=2)
    (dest / "tdk-ledger.json").unlink()
    publish([sample_repo], open_store(f"file://{dest}"), copies=1, prune=True)
    assert not (dest / "mme" / "tokenizer-1.tar.gz").exists()
    assert (dest / "mme" / "tokenizer-0.tar.gz").exists()


def test_publish_reports_every_phase_and_every_uploaded_byte(
    sample_repo: Path, tmp_path: Path
) -> None:
    started: list[tuple[str, int, str]] = []
    done: dict[str, int] = {}

    def phase(description: str, total: int, unit: str = "") -> Callable[[int], None]:
        started.append((description, total, unit))
        done[description] = 0

        def advance(amount: int) -> None:
            done[description] += amount

        return advance

    url = f"file://{tmp_path / 'release'}"
    result = publish([sample_repo], open_store(url), copies=2, phase=phase)
    kinds = [(d.split(" ")[0], unit) for d, _, unit in started]
    assert kinds == [("packaging", ""), ("comparing", ""), ("uploading", "bytes")]
    assert all(done[d] == total for d, total, _ in started)
    assert started[2][1] == result.uploaded_bytes > 0


@pytest.fixture
def digest_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("TDK_CACHE_DIR", str(cache))
    return cache


def _phase_totals(totals: dict[str, int]) -> Callable[..., Callable[[int], None]]:
    def phase(description: str, total: int, unit: str = "") -> Callable[[int], None]:
        totals[description.split(" ")[0]] = total
        return lambda _: None

    return phase


def test_noop_republish_builds_reads_and_uploads_nothing(
    sample_repo: Path, tmp_path: Path, digest_cache: Path
) -> None:
    url = f"file://{tmp_path / 'release'}"
    first = publish([sample_repo], open_store(url), copies=3)
    assert len(first.rebuilt) == 12 and first.hashed_bytes > 0
    assert set(first.uploaded).isdisjoint(first.copied)
    assert set(first.uploaded + first.copied).isdisjoint(first.skipped)
    totals: dict[str, int] = {}
    again = publish([sample_repo], open_store(url), copies=3, phase=_phase_totals(totals))
    assert again.rebuilt == [] and totals["packaging"] == 0  # no temp archive at all
    assert again.hashed_bytes == 0  # the digest cache knew every input file
    assert again.uploaded == [] and again.copied == [] and again.uploaded_bytes == 0
    assert sorted(again.skipped) == sorted(first.uploaded + first.copied + first.skipped)
    assert [m.content_key for m in again.manifest.models] == [
        m.content_key for m in first.manifest.models
    ]


def test_first_publish_reports_no_more_bytes_than_the_store_holds(
    sample_repo: Path, tmp_path: Path, digest_cache: Path
) -> None:
    dest = tmp_path / "release"
    result = publish([sample_repo], open_store(f"file://{dest}"), copies=3)
    inodes = {
        (p.stat().st_ino, p.stat().st_size)
        for p in dest.rglob("*")
        if p.is_file() and p.parts[-2] != ".tdk-staging"
    }
    held = sum(size for _, size in inodes)
    assert 0 < result.uploaded_bytes <= held


def test_one_changed_model_rebuilds_only_the_copies_made_of_it(
    sample_repo: Path, tmp_path: Path, digest_cache: Path
) -> None:
    repo = _repo_copy(sample_repo, tmp_path)
    url = f"file://{tmp_path / 'release'}"
    publish([repo], open_store(url), copies=2)
    model_py = repo / "tokenizer" / "1" / "model.py"
    data = model_py.read_bytes()
    info = model_py.stat()
    # Same size and mtime, other bytes: the digest cache must still notice (ctime changed).
    model_py.write_bytes(data[:-1] + (b"#" if data[-1:] != b"#" else b" "))
    os.utime(model_py, ns=(info.st_atime_ns, info.st_mtime_ns))
    result = publish([repo], open_store(url), copies=2)
    assert sorted(result.rebuilt) == [
        "text_pipeline-0.tar.gz",
        "text_pipeline-1.tar.gz",
        "tokenizer-0.tar.gz",
        "tokenizer-1.tar.gz",
    ]
    assert "mme/image_classifier-0.tar.gz" in result.skipped
    release = tmp_path / "release"
    for model in result.manifest.models:
        assert hashlib.sha256((release / model.archive).read_bytes()).hexdigest() == model.sha256
    served = (release / "repository" / "tokenizer-1" / "1" / "model.py").read_bytes()
    assert served == model_py.read_bytes()


def test_unchanged_copy_whose_object_is_gone_is_rebuilt(
    sample_repo: Path, tmp_path: Path, digest_cache: Path
) -> None:
    dest = tmp_path / "release"
    publish([sample_repo], open_store(f"file://{dest}"), copies=1)
    (dest / "mme" / "tokenizer-0.tar.gz").unlink()
    (dest / "repository" / "image_classifier-0" / "config.pbtxt").unlink()
    result = publish([sample_repo], open_store(f"file://{dest}"), copies=1)
    assert sorted(result.rebuilt) == ["image_classifier-0.tar.gz", "tokenizer-0.tar.gz"]
    assert (dest / "mme" / "tokenizer-0.tar.gz").is_file()
    assert (dest / "repository" / "image_classifier-0" / "config.pbtxt").is_file()


def test_summary_counts_written_and_unchanged_objects_apart(
    sample_repo: Path, tmp_path: Path, digest_cache: Path
) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    runner = CliRunner(env={"COLUMNS": "200"})
    args = ["package", str(sample_repo), "--release", f"file://{tmp_path / 'r'}", "--copies", "2"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "(8 rebuilt)" in first.output and "; 0 unchanged" in first.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    text = " ".join(again.output.split())
    assert "(0 rebuilt); uploaded 0 object(s), 0 B;" in text and "manifest unchanged" in text
