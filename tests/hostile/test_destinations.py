"""Hostile ``--release`` values for ``tdk package``: one row per input, each with its exit code,
a fragment of the message, and proof that nothing was written or deleted (the destination and
the current directory, which holds the user's own files, are snapshotted before and after)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.publish import MAX_RELEASE_COPIES
from tests.hostile.snapshot import changes, snapshot

runner = CliRunner(env={"COLUMNS": "200"})


@dataclass(frozen=True)
class Row:
    dest: str  # "{cwd}" and "{home}" are replaced
    exit_code: int
    fragment: str
    args: tuple[str, ...] = ()


ROWS = {
    "empty": Row("", 2, "names no directory"),
    "empty-prune": Row("", 2, "names no directory", ("--prune",)),
    "blank": Row("   ", 2, "names no directory"),
    "file-scheme-only": Row("file://", 2, "names no directory", ("--prune",)),
    "filesystem-root": Row("file:///", 2, "root of the filesystem"),
    "filesystem-root-prune": Row("file:///", 2, "root of the filesystem", ("--prune",)),
    "home": Row("{home}", 2, "home directory", ("--prune",)),
    "home-tilde": Row("~", 2, "home directory"),
    "s3-no-bucket": Row("s3://", 2, "names no bucket"),
    "gs-no-bucket": Row("gs://", 2, "names no bucket", ("--prune",)),
    "s3-bucket-root-prune": Row("s3://bucket", 2, "whole bucket", ("--prune",)),
    "s3-bucket-slash-prune": Row("s3://bucket/", 2, "whole bucket", ("--prune",)),
    "gs-bucket-root-prune": Row("gs://bucket", 2, "whole bucket", ("--prune",)),
    "az-no-account": Row("az://", 2, "names no storage account", ("--prune",)),
    "az-no-container": Row("az://acct", 2, "names no container"),
    "az-no-container-slash": Row("az://acct/", 2, "names no container"),
    "az-account-uppercase": Row("az://MyAcct/releases/r1", 2, "not a valid Azure storage account"),
    "az-account-too-long": Row("az://" + "a" * 25 + "/c1c/r1", 2, "not a valid Azure storage"),
    "az-container-double-dash": Row("az://acct/rel--eases/r1", 2, "not a valid Azure container"),
    "az-container-too-short": Row("az://acct/ab/r1", 2, "not a valid Azure container"),
    "az-container-root-prune": Row("az://acct/releases", 2, "whole container", ("--prune",)),
    "az-container-slash-prune": Row("az://acct/releases/", 2, "whole container", ("--prune",)),
    "dest-is-a-file": Row("file://{cwd}/notes.txt", 1, "choose a directory"),
    "dest-under-a-file": Row("{cwd}/notes.txt/release", 1, "Not a directory"),
    "dest-not-permitted": Row("file:///sys/tdk-release", 1, "choose a destination you can write"),
    "dest-cannot-be-created": Row("file:///proc/tdk-release", 1, "cannot be created"),
    "foreign-manifest-json": Row(".", 2, "not a tdk manifest", ("--prune",)),
    "inside-a-release-mme": Row("{cwd}/mme/inner", 2, "inside the mme/ of the release at"),
    "inside-a-release-repository": Row(
        "file://{cwd}/repository/mine/1", 2, "inside the repository/ of the release at"
    ),
    "absurd-copies": Row(
        "file://{cwd}/release",
        2,
        f"at most {MAX_RELEASE_COPIES}",
        ("--copies", str(MAX_RELEASE_COPIES + 1)),
    ),
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current directory full of the user's own files, some named like ours; $HOME in it."""
    cwd = tmp_path / "work"
    (cwd / "home").mkdir(parents=True)
    (cwd / "home" / ".bashrc").write_text("# mine\n")
    (cwd / "mme").mkdir(parents=True)
    (cwd / "notes.txt").write_text("mine\n")
    (cwd / "mme" / "keep.tar.gz").write_bytes(b"not from tdk")
    (cwd / "repository" / "mine" / "1").mkdir(parents=True)
    (cwd / "repository" / "mine" / "1" / "model.onnx").write_bytes(b"weights")
    (cwd / "manifest.json").write_text("{}\n")
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(cwd / "home"))
    # Nothing may reach a real cloud: dead local endpoints for both SDKs.
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:9")
    monkeypatch.setenv("TDK_S3_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv(
        "AZURE_STORAGE_CONNECTION_STRING",
        "AccountName=acct;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:9/acct;",
    )
    return cwd


@pytest.mark.parametrize("name", sorted(ROWS))
def test_hostile_destination_is_refused_before_anything_is_written(
    name: str, workdir: Path, sample_repo: Path
) -> None:
    row = ROWS[name]
    dest = row.dest.format(cwd=workdir, home=workdir / "home")
    before = snapshot(workdir)
    result = runner.invoke(
        app, ["package", str(sample_repo / "tokenizer"), "--release", dest, *row.args]
    )
    assert result.exit_code == row.exit_code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert row.fragment in result.output
    assert "hint:" in result.output
    assert changes(before, snapshot(workdir)) == {"added": [], "removed": [], "changed": []}


def test_prune_in_a_directory_of_user_files_deletes_only_what_tdk_wrote(
    workdir: Path, sample_repo: Path
) -> None:
    """The original defect: publishing into the current directory with --prune deleted the
    user's files. Now only objects a tdk release wrote (its ledger/manifest) are pruned."""
    (workdir / "manifest.json").unlink()  # a foreign manifest.json is refused (a row above)
    before = snapshot(workdir)
    args = ["package", str(sample_repo / "tokenizer"), "--release", "."]
    first = runner.invoke(app, [*args, "--copies", "3", "--prune"])
    assert first.exit_code == 0, first.output
    ours = snapshot(workdir)
    assert "mme/tokenizer-2.tar.gz" in ours
    second = runner.invoke(app, [*args, "--copies", "1", "--prune"])
    assert second.exit_code == 0, second.output
    after = snapshot(workdir)
    diff = changes(before, after)
    assert diff["removed"] == [] and diff["changed"] == []
    assert "mme/tokenizer-2.tar.gz" not in after and "mme/tokenizer-0.tar.gz" in after
    for path in ("notes.txt", "mme/keep.tar.gz", "repository/mine/1/model.onnx"):
        assert after[path] == before[path]
    assert not [p for p in after if Path(p).name.startswith(".tdk")]


def test_prune_never_deletes_files_the_user_added_to_a_release(
    tmp_path: Path, sample_repo: Path
) -> None:
    dest = tmp_path / "release"
    args = ["package", str(sample_repo), "--release", f"file://{dest}"]
    assert runner.invoke(app, [*args, "--copies", "2"]).exit_code == 0
    (dest / "mme" / "hand-made.tar.gz").write_bytes(b"uploaded by hand")
    (dest / "repository" / "text_classifier-1" / "1" / "extra.txt").write_text("mine")
    assert runner.invoke(app, [*args, "--copies", "1"]).exit_code == 0  # stale, not pruned
    pruned = runner.invoke(app, [*args, "--copies", "1", "--prune", "--json"])
    assert pruned.exit_code == 0, pruned.output
    assert (dest / "mme" / "hand-made.tar.gz").read_bytes() == b"uploaded by hand"
    assert (dest / "repository" / "text_classifier-1" / "1" / "extra.txt").read_text() == "mine"
    assert not (dest / "mme" / "text_classifier-1.tar.gz").exists()
    assert not (dest / "repository" / "text_classifier-1" / "1" / "model.onnx").exists()


def test_hard_link_to_a_file_outside_the_repository_is_refused(
    tmp_path: Path, sample_repo: Path
) -> None:
    """Issue 25 item 4: it was a warning, and the outside file's bytes were published."""
    repo = Path(shutil.copytree(sample_repo / "tokenizer", tmp_path / "repo" / "tokenizer"))
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (repo / "1" / "vocab.txt").hardlink_to(outside)
    result = runner.invoke(app, ["package", str(repo), "--release", f"file://{tmp_path / 'r'}"])
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert "vocab.txt has 2 hard links, 1 of them outside" in output and "hint:" in output
    assert not (tmp_path / "r" / "mme").exists() and not (tmp_path / "r" / "manifest.json").exists()


def test_hard_links_between_packaged_files_are_accepted(tmp_path: Path, sample_repo: Path) -> None:
    repo = Path(shutil.copytree(sample_repo / "tokenizer", tmp_path / "repo" / "tokenizer"))
    (repo / "1" / "model-copy.py").hardlink_to(repo / "1" / "model.py")
    result = runner.invoke(app, ["package", str(repo), "--release", f"file://{tmp_path / 'r'}"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "where",
    ["repo-out", "repo-itself", "model-version-dir", "symlink-into-repo", "repo-inside-dest"],
)
def test_destination_overlapping_an_input_is_refused_with_nothing_written(
    where: str, tmp_path: Path, sample_repo: Path
) -> None:
    repo = Path(shutil.copytree(sample_repo, tmp_path / "repo"))
    link = tmp_path / "link"
    link.symlink_to(repo / "tokenizer")
    dest, inputs = {
        "repo-out": (repo / "out", [repo]),
        "repo-itself": (repo, [repo]),
        "model-version-dir": (repo / "tokenizer" / "1" / "rel", [repo / "tokenizer"]),
        "symlink-into-repo": (link / "out", [repo]),
        "repo-inside-dest": (tmp_path, [repo / "tokenizer"]),
    }[where]
    before = snapshot(tmp_path)
    args = [str(p) for p in inputs]
    result = runner.invoke(app, ["package", *args, "--release", f"file://{dest}", "--prune"])
    assert result.exit_code == 2, result.output
    assert "refusing to publish" in result.output and "hint:" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert changes(before, snapshot(tmp_path)) == {"added": [], "removed": [], "changed": []}


def test_destination_inside_an_s3_release_is_refused(moto_endpoint: str, sample_repo: Path) -> None:
    import os

    import boto3

    bucket = f"tdk-{os.urandom(4).hex()}"
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket=bucket)
    model = str(sample_repo / "tokenizer")
    common = ["--s3-endpoint-url", moto_endpoint]
    first = runner.invoke(app, ["package", model, "--release", f"s3://{bucket}/r1", *common])
    assert first.exit_code == 0, first.output
    inner = runner.invoke(app, ["package", model, "--release", f"s3://{bucket}/r1/mme/x", *common])
    assert inner.exit_code == 2, inner.output
    assert "inside the mme/ of the release at r1" in " ".join(inner.output.split())


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("tdk-ledger.json", '{"format_version": 1, "keys": ["../victim.txt"]}', "not a path"),
        ("tdk-ledger.json", "[" * 100_000 + "]" * 100_000, "not a tdk ledger"),
        ("manifest.json", "[" * 100_000 + "]" * 100_000, "not a tdk manifest"),
        ("tdk-ledger.json", '{"format_version": 1, "keys": ["/etc/passwd"]}', "not a path"),
    ],
    ids=["ledger-parent", "ledger-deep", "manifest-deep", "ledger-absolute"],
)
def test_hostile_release_ledger_or_manifest_is_refused(
    name: str, content: str, fragment: str, tmp_path: Path, sample_repo: Path
) -> None:
    dest = tmp_path / "release"
    dest.mkdir()
    (tmp_path / "victim.txt").write_text("mine\n")
    (dest / name).write_text(content)
    before = snapshot(tmp_path)
    args = ["package", str(sample_repo / "tokenizer"), "--release", f"file://{dest}", "--prune"]
    result = runner.invoke(app, args)
    assert result.exit_code != 0, result.output
    assert fragment in " ".join(result.output.split()) and "hint:" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    diff = changes(before, snapshot(tmp_path))
    assert diff["removed"] == [] and diff["changed"] == [], diff
