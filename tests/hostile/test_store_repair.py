"""Issue 25 item 8: a republish checks every stored object's size and repairs what does not
match ("0 rebuilt, manifest unchanged" on a corrupted store was the bug)."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from packager.manifest import REPOSITORY_PREFIX
from packager.publish import PublishResult, publish
from packager.stores import open_store, record
from packager.stores.record import RECORD_NAME
from packager.stores.s3 import SHA_META
from tdk.errors import StoreError


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


class _S3Release:
    """A tokenizer release on moto, and a republish that counts its S3 requests."""

    def __init__(self, sample_repo: Path, endpoint: str, copies: int = 2) -> None:
        import boto3

        self.s3 = boto3.client("s3", endpoint_url=endpoint)
        self.bucket = f"tdk-{os.urandom(4).hex()}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.url, self.endpoint, self.repos = f"s3://{self.bucket}/r1", endpoint, [sample_repo]
        self.copies = copies
        self.first = publish(self.repos, open_store(self.url, endpoint_url=endpoint), copies)
        self.keys = sorted(self.first.manifest.keys())

    def republish(self) -> tuple[PublishResult, list[str]]:
        store = open_store(self.url, endpoint_url=self.endpoint)
        calls: list[str] = []
        store.client.meta.events.register(  # type: ignore[attr-defined]
            "before-call.s3.*", lambda model, **_: calls.append(model.name)
        )
        return publish(self.repos, store, self.copies), calls

    def put(self, key: str, body: bytes, **extra: Any) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=f"r1/{key}", Body=body, **extra)

    def read(self, key: str) -> bytes:
        return bytes(self.s3.get_object(Bucket=self.bucket, Key=f"r1/{key}")["Body"].read())


def test_a_damaged_s3_object_is_repaired(
    sample_repo: Path, moto_endpoint: str, tmp_path: Path
) -> None:
    release = _S3Release(sample_repo / "tokenizer", moto_endpoint, copies=1)
    model = release.first.manifest.models[0]
    # Damaged bytes under the same sha256 metadata: only the size can tell.
    release.put(model.archive, b"\0" * 10, Metadata={SHA_META: model.sha256})
    again, _ = release.republish()
    assert model.archive in again.uploaded
    body = release.read(model.archive)
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
    release = _S3Release(sample_repo / "tokenizer", moto_endpoint, copies=1)
    model = release.first.manifest.models[0]
    keys = [f"r1/{model.archive}", "r1/repository/tokenizer-0/1/model.py"]
    for key in keys:
        body = release.read(key[len("r1/") :])
        meta = release.s3.head_object(Bucket=release.bucket, Key=key)["Metadata"]
        # same size, same sha256 metadata, even a SHA-256 checksum (of the new bytes)
        release.put(
            key[len("r1/") :],
            _same_size_garbage(body),
            Metadata=meta,
            ChecksumAlgorithm="SHA256",
        )
    again, _ = release.republish()
    assert {model.archive, "repository/tokenizer-0/1/model.py"} <= set(again.uploaded)
    read = {k[len("r1/") :]: release.read(k[len("r1/") :]) for k in keys}
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


class _AzRelease:
    """A tokenizer release in a fresh Azurite container, and the blobs behind our back."""

    def __init__(self, sample_repo: Path, connection: str) -> None:
        from azure.storage.blob import BlobServiceClient

        service = BlobServiceClient.from_connection_string(connection)
        self.container = service.create_container(f"tdk-{os.urandom(4).hex()}")
        self.url = f"az://{service.account_name}/{self.container.container_name}/r1"
        self.repos = [sample_repo]
        self.first = publish(self.repos, open_store(self.url), 1)
        self.model = self.first.manifest.models[0]
        self.damaged = [self.model.archive, "repository/tokenizer-0/1/model.py"]

    def blob(self, key: str) -> Any:
        return self.container.get_blob_client(f"r1/{key}")

    def read(self, key: str) -> bytes:
        return bytes(self.blob(key).download_blob().readall())

    def republish_repairs(self) -> None:
        again = publish(self.repos, open_store(self.url), 1)
        assert set(self.damaged) <= set(again.uploaded)
        assert hashlib.sha256(self.read(self.model.archive)).hexdigest() == self.model.sha256
        files = again.manifest.models[0].files
        body = self.read(self.damaged[1])
        assert hashlib.sha256(body).hexdigest() == files["tokenizer-0/1/model.py"]
        assert publish(self.repos, open_store(self.url), 1).uploaded == []


def test_a_same_size_az_corruption_is_repaired(sample_repo: Path, azurite: str) -> None:
    """Put Blob of other bytes, same size, tdk's metadata kept: Azure stores the Content-MD5
    of the new bytes, which is not the MD5 tdk recorded."""
    release = _AzRelease(sample_repo / "tokenizer", azurite)
    for key in release.damaged:
        metadata = release.blob(key).get_blob_properties().metadata
        garbage = _same_size_garbage(release.read(key))
        release.blob(key).upload_blob(garbage, overwrite=True, metadata=metadata)
    release.republish_repairs()


def test_an_az_blob_rewritten_in_blocks_without_content_md5_is_repaired(
    sample_repo: Path, azurite: str
) -> None:
    """Blocks committed by Put Block List carry no Content-MD5 unless the writer sends one:
    tdk's metadata alone, with no MD5 to match it, does not vouch for the bytes."""
    from azure.storage.blob import BlobBlock

    release = _AzRelease(sample_repo / "tokenizer", azurite)
    for key in release.damaged:
        blob = release.blob(key)
        metadata = blob.get_blob_properties().metadata
        blob.stage_block("b0", _same_size_garbage(release.read(key)))
        blob.commit_block_list([BlobBlock("b0")], metadata=metadata)
        assert not blob.get_blob_properties().content_settings.content_md5
    release.republish_repairs()


def test_an_az_blob_cut_short_is_repaired(sample_repo: Path, azurite: str) -> None:
    release = _AzRelease(sample_repo / "tokenizer", azurite)
    for key in release.damaged:
        metadata = release.blob(key).get_blob_properties().metadata
        release.blob(key).upload_blob(b"\0" * 10, overwrite=True, metadata=metadata)
    release.republish_repairs()


def test_an_intact_republish_uploads_nothing_on_file(sample_repo: Path, tmp_path: Path) -> None:
    dest = tmp_path / "release"
    publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=2)
    again = publish([sample_repo / "tokenizer"], open_store(f"file://{dest}"), copies=2)
    assert again.uploaded == [] and again.copied == [] and again.rebuilt == []


# A no-op republish to s3:// compares ONE listing (ETag, size) with tdk-objects.json, the
# record of the ETags tdk's own writes returned, instead of one HEAD per object; whatever the
# listing or the record cannot vouch for is asked about as before.


@pytest.fixture
def s3_release(sample_repo: Path, moto_endpoint: str) -> _S3Release:
    return _S3Release(sample_repo / "tokenizer", moto_endpoint)


def test_the_record_holds_the_etag_each_write_returned(s3_release: _S3Release) -> None:
    record = json.loads(s3_release.read(RECORD_NAME))["objects"]
    assert sorted(record) == s3_release.keys
    listing = s3_release.s3.list_objects_v2(Bucket=s3_release.bucket, Prefix="r1/")["Contents"]
    etags = {item["Key"][3:]: item["ETag"].strip('"') for item in listing}
    shas = {m.archive: m.sha256 for m in s3_release.first.manifest.models}
    for key, entry in record.items():
        assert entry["tag"] == etags[key]
        assert entry["sha256"] == hashlib.sha256(s3_release.read(key)).hexdigest()
        assert shas.get(key, entry["sha256"]) == entry["sha256"]


def test_an_intact_s3_republish_sends_no_head(s3_release: _S3Release) -> None:
    again, calls = s3_release.republish()
    assert again.uploaded == [] and again.copied == [] and again.rebuilt == []
    assert calls.count("HeadObject") == 0 and calls.count("ListObjectsV2") == 2
    assert not again.warnings


def test_an_object_overwritten_behind_our_back_costs_one_head_and_is_repaired(
    s3_release: _S3Release,
) -> None:
    model = s3_release.first.manifest.models[0]
    body = s3_release.read(model.archive)
    meta = s3_release.s3.head_object(Bucket=s3_release.bucket, Key=f"r1/{model.archive}")
    # same size, tdk's sha256 metadata, even S3's SHA-256 checksum (of the other bytes)
    s3_release.put(
        model.archive,
        _same_size_garbage(body),
        Metadata=meta["Metadata"],
        ChecksumAlgorithm="SHA256",
    )
    again, calls = s3_release.republish()
    assert calls.count("HeadObject") == 1
    assert model.archive in again.uploaded
    assert hashlib.sha256(s3_release.read(model.archive)).hexdigest() == model.sha256
    third, calls = s3_release.republish()  # the record now holds the repaired object's ETag
    assert calls.count("HeadObject") == 0 and third.uploaded == []


def test_without_a_record_every_object_is_checked_then_recorded(s3_release: _S3Release) -> None:
    """A release from before the record (or whose record was deleted): one HEAD per object,
    as before, and the record is written, so the next republish needs none."""
    s3_release.s3.delete_object(Bucket=s3_release.bucket, Key=f"r1/{RECORD_NAME}")
    again, calls = s3_release.republish()
    assert calls.count("HeadObject") == len(s3_release.keys)
    assert again.uploaded == [] and not again.warnings
    assert sorted(json.loads(s3_release.read(RECORD_NAME))["objects"]) == s3_release.keys
    _, calls = s3_release.republish()
    assert calls.count("HeadObject") == 0


def _rewrite(record: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> bytes:
    change(record)
    return json.dumps(record).encode()


def _each_entry(field: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        for entry in record["objects"].values():
            entry[field] = value

    return change


GARBAGE: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "not JSON": lambda _: b"\xff{ not json",
    "nested deep": lambda _: b"[" * 100_000,
    "a list": lambda _: b"[]",
    "another format": lambda r: _rewrite(r, lambda r: r.update(format_version=99)),
    "objects a list": lambda r: _rewrite(r, lambda r: r.update(objects=[])),
    "size a string": lambda r: _rewrite(r, _each_entry("size", "12")),
    "size a bool": lambda r: _rewrite(r, _each_entry("size", True)),
    "sha256 not hex": lambda r: _rewrite(r, _each_entry("sha256", "z" * 64)),
    "tag empty": lambda r: _rewrite(r, _each_entry("tag", "")),
    "an extra field": lambda r: _rewrite(r, _each_entry("trusted", True)),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_a_garbage_record_is_set_aside_and_every_object_checked(
    s3_release: _S3Release, case: str
) -> None:
    original = s3_release.read(RECORD_NAME)
    s3_release.put(RECORD_NAME, GARBAGE[case](json.loads(original)))
    again, calls = s3_release.republish()
    assert calls.count("HeadObject") == len(s3_release.keys)
    assert again.uploaded == []
    assert any(f"{RECORD_NAME}: not a tdk object record" in w for w in again.warnings)
    assert s3_release.read(RECORD_NAME) == original  # rewritten whole


def test_a_record_larger_than_its_cap_is_not_read_whole(
    s3_release: _S3Release, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record, "RECORD_MAX_BYTES", 4096)
    s3_release.put(RECORD_NAME, b" " * 100_000)
    again, calls = s3_release.republish()
    assert calls.count("HeadObject") == len(s3_release.keys)
    assert any("is larger than 4096 bytes" in w for w in again.warnings)


def test_a_record_that_lies_is_not_trusted(s3_release: _S3Release) -> None:
    """Entries whose tag is not the listing's, or whose sha256 is not the manifest's, vouch
    for nothing: those objects are asked about (and the corrupted one repaired)."""
    model = s3_release.first.manifest.models[0]
    s3_release.put(model.archive, _same_size_garbage(s3_release.read(model.archive)))
    lying = json.loads(s3_release.read(RECORD_NAME))
    listing = s3_release.s3.list_objects_v2(Bucket=s3_release.bucket, Prefix="r1/mme/")
    entry = lying["objects"][model.archive]
    entry["tag"] = listing["Contents"][0]["ETag"].strip('"')  # the corrupted object's ETag
    repo_key = next(key for key in s3_release.keys if key.startswith(REPOSITORY_PREFIX))
    lying["objects"][repo_key]["sha256"] = "0" * 64  # not what the manifest names
    entry["sha256"] = "1" * 64
    s3_release.put(RECORD_NAME, json.dumps(lying).encode())
    again, calls = s3_release.republish()
    assert calls.count("HeadObject") == 2
    assert again.uploaded == [model.archive]
    assert hashlib.sha256(s3_release.read(model.archive)).hexdigest() == model.sha256


def test_without_a_manifest_the_record_still_spares_the_heads(s3_release: _S3Release) -> None:
    """A publish cut off after it removed the manifest: the objects the record vouches for
    (listed tag and size as recorded) are not asked about; the manifest is written again."""
    s3_release.s3.delete_object(Bucket=s3_release.bucket, Key="r1/manifest.json")
    again, calls = s3_release.republish()
    assert calls.count("HeadObject") == 0
    assert again.uploaded == [] and again.copied == [] and again.manifest_written
    assert json.loads(s3_release.read("manifest.json"))["models"]


def test_a_record_that_cannot_be_written_is_a_warning_not_a_failure(
    s3_release: _S3Release, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record is written once the release is complete and only spares later checks."""
    from packager import repair

    def refuse(store: object, entries: object) -> None:
        raise StoreError(f"cannot write s3://…/{RECORD_NAME}: AccessDenied", hint="")

    s3_release.s3.delete_object(Bucket=s3_release.bucket, Key=f"r1/{RECORD_NAME}")
    monkeypatch.setattr(repair, "write_record", refuse)
    again, _ = s3_release.republish()
    assert any("AccessDenied; the release is complete" in w for w in again.warnings)
    assert json.loads(s3_release.read("manifest.json"))["models"]
