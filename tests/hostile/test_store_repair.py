"""Issue 25 item 8: a republish checks every stored object's size and repairs what does not
match ("0 rebuilt, manifest unchanged" on a corrupted store was the bug)."""

from __future__ import annotations

import hashlib
import os
import tarfile
from pathlib import Path

import pytest

from packager.manifest import REPOSITORY_PREFIX
from packager.publish import PublishResult, publish
from packager.stores import open_store
from packager.stores.s3 import SHA_META


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))


def _assert_intact(read: dict[str, bytes], result: PublishResult) -> None:
    for model in result.manifest.models:
        assert hashlib.sha256(read[model.archive]).hexdigest() == model.sha256
        for rel, sha in model.files.items():
            assert hashlib.sha256(read[REPOSITORY_PREFIX + rel]).hexdigest() == sha


def _file_contents(dest: Path) -> dict[str, bytes]:
    return {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()}


def test_a_truncated_archive_and_repository_file_are_repaired_on_file(
    sample_repo: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "release"
    first = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=2)
    model = first.manifest.models[0]
    archive = dest / model.archive
    repo_file = dest / "repository" / "tokenizer-0" / "1" / "model.py"
    for damaged in (archive, repo_file):
        data = damaged.read_bytes()
        damaged.unlink()  # copies share an inode on file://: damage this name only
        damaged.write_bytes(data[: len(data) // 2])
    again = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=2)
    assert model.archive in again.uploaded + again.copied
    assert "repository/tokenizer-0/1/model.py" in again.uploaded + again.copied
    _assert_intact(_file_contents(dest), again)
    with tarfile.open(archive) as opened:
        assert len(opened.getnames()) > 1


def test_a_damaged_s3_object_is_repaired(
    sample_repo: Path, moto_endpoint: str, tmp_path: Path
) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=moto_endpoint)
    bucket = f"tdk-{os.urandom(4).hex()}"
    s3.create_bucket(Bucket=bucket)
    url = f"s3://{bucket}/r1"
    first = publish([sample_repo / "tokenizer"], open_store(url, endpoint_url=moto_endpoint), 1)
    model = first.manifest.models[0]
    key = f"r1/{model.archive}"
    # Damaged bytes under the same sha256 metadata: only the size can tell.
    s3.put_object(Bucket=bucket, Key=key, Body=b"\0" * 10, Metadata={SHA_META: model.sha256})
    again = publish([sample_repo / "tokenizer"], open_store(url, endpoint_url=moto_endpoint), 1)
    assert model.archive in again.uploaded
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    assert hashlib.sha256(body).hexdigest() == model.sha256


def _same_size_garbage(data: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in data)


def test_a_same_size_corruption_is_repaired_on_file(sample_repo: Path, tmp_path: Path) -> None:
    """Bytes changed in place, size kept: only the sha256 of the stored bytes can tell."""
    dest = tmp_path / "release"
    first = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=1)
    model = first.manifest.models[0]
    archive = dest / model.archive
    repo_file = dest / "repository" / "tokenizer-0" / "1" / "model.py"
    for damaged in (archive, repo_file):
        damaged.write_bytes(_same_size_garbage(damaged.read_bytes()))  # in place
    again = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=1)
    assert again.rebuilt == [model.target_model]
    assert {model.archive, "repository/tokenizer-0/1/model.py"} <= set(again.uploaded)
    _assert_intact(_file_contents(dest), again)


def test_a_symlinked_store_object_is_replaced_not_read(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    first = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=1)
    model = first.manifest.models[0]
    archive = dest / model.archive
    twin = tmp_path / "twin.tar.gz"
    twin.write_bytes(archive.read_bytes())  # the right bytes, but behind a link
    archive.unlink()
    archive.symlink_to(twin)
    again = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=1)
    assert model.archive in again.uploaded
    assert not archive.is_symlink()


def test_a_same_size_s3_corruption_is_repaired(
    sample_repo: Path, moto_endpoint: str, tmp_path: Path
) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=moto_endpoint)
    bucket = f"tdk-{os.urandom(4).hex()}"
    s3.create_bucket(Bucket=bucket)
    url = f"s3://{bucket}/r1"
    first = publish([sample_repo / "tokenizer"], open_store(url, endpoint_url=moto_endpoint), 1)
    model = first.manifest.models[0]
    keys = [f"r1/{model.archive}", "r1/repository/tokenizer-0/1/model.py"]
    for key in keys:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        meta = s3.head_object(Bucket=bucket, Key=key)["Metadata"]
        # same size, same sha256 metadata, even a SHA-256 checksum (of the new bytes)
        s3.put_object(
            Bucket=bucket,
            Key=key,
            Body=_same_size_garbage(body),
            Metadata=meta,
            ChecksumAlgorithm="SHA256",
        )
    again = publish([sample_repo / "tokenizer"], open_store(url, endpoint_url=moto_endpoint), 1)
    assert {model.archive, "repository/tokenizer-0/1/model.py"} <= set(again.uploaded)
    read = {k[len("r1/") :]: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}
    assert hashlib.sha256(read[model.archive]).hexdigest() == model.sha256
    entry = again.manifest.models[0]
    assert hashlib.sha256(read[keys[1][3:]]).hexdigest() == entry.files["tokenizer-0/1/model.py"]


def test_a_same_size_gcs_corruption_is_repaired(
    sample_repo: Path, gcs_emulator: str, tmp_path: Path
) -> None:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    client = storage.Client(project="test", credentials=AnonymousCredentials())
    bucket = client.create_bucket(f"tdk-{os.urandom(4).hex()}")
    url = f"gs://{bucket.name}/r1"
    first = publish([sample_repo / "tokenizer"], open_store(url), 1)
    model = first.manifest.models[0]
    names = [f"r1/{model.archive}", "r1/repository/tokenizer-0/1/model.py"]
    for name in names:
        blob = bucket.get_blob(name)
        metadata = dict(blob.metadata)  # tdk's sha256 and CRC32C, kept as they were
        replacement = bucket.blob(name)
        replacement.metadata = metadata
        replacement.upload_from_string(_same_size_garbage(blob.download_as_bytes()))
    again = publish([sample_repo / "tokenizer"], open_store(url), 1)
    assert {model.archive, "repository/tokenizer-0/1/model.py"} <= set(again.uploaded)
    body = bucket.blob(names[0]).download_as_bytes()
    assert hashlib.sha256(body).hexdigest() == model.sha256


def test_an_intact_republish_uploads_nothing_on_file(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=2)
    again = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=2)
    assert again.uploaded == [] and again.copied == [] and again.rebuilt == []
