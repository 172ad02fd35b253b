"""The ``az://`` store's own behaviour against Azurite: what a republish asks, what the blobs
carry, how its credentials and limits are refused (the shared suites are in test_stores.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from packager.publish import publish
from packager.stores import open_store
from packager.stores.azblob import MD5_META, SHA_META
from tdk.errors import ConfigError, StoreError
from tests.packager.test_stores import count_requests, new_container


@pytest.fixture
def az_url(azurite: str) -> str:
    return f"az://{new_container(azurite)}/releases/r1"


def test_noop_republish_to_az_asks_about_no_blob(
    az_url: str, sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """List Blobs with metadata carries each blob's Content-MD5 and tdk's metadata: the
    checksum check of every blob is answered from it, with no request per blob, no upload."""
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    publish([sample_repo / "tokenizer"], open_store(az_url), copies=2)
    sent = count_requests(monkeypatch)
    again = publish([sample_repo / "tokenizer"], open_store(az_url), copies=2)
    assert again.uploaded == [] and again.rebuilt == [] and again.copied == []
    lists = [url for _, url in sent if "comp=list" in url]
    assert len(lists) == 2 and all("include=metadata" in url for url in lists)
    per_blob = [url for method, url in sent if "/mme/" in url or "/repository/" in url]
    assert [url for url in per_blob if "comp=list" not in url] == []
    writes = [url.split("?")[0].rsplit("/", 1)[1] for method, url in sent if method == "PUT"]
    assert writes == ["tdk-publish.lock"]  # the lock, then deleted


def test_a_published_blob_carries_its_sha256_and_md5(az_url: str, tmp_path: Path) -> None:
    store = open_store(az_url)
    path = tmp_path / "m.bin"
    path.write_bytes(b"weights" * 1000)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    store.put_file("mme/m.tar.gz", path, sha)
    store.copy("mme/m.tar.gz", "mme/twin.tar.gz", sha)
    listed = store.list_objects("mme/")
    assert sorted(listed) == ["mme/m.tar.gz", "mme/twin.tar.gz"]
    for item in listed.values():
        assert item.size == 7000 and item.tag and item.verdict is not None
        assert item.verdict(sha) is True and item.verdict("0" * 64) is False
    props = store._blob("mme/twin.tar.gz").get_blob_properties()  # type: ignore[attr-defined]
    assert props.metadata[SHA_META] == sha
    md5 = hashlib.md5(path.read_bytes(), usedforsecurity=False).digest()
    assert bytes(props.content_settings.content_md5) == md5
    assert props.metadata[MD5_META] and props.content_settings.content_type == "application/gzip"
    assert store.read_prefix("mme/m.tar.gz", 4) == b"weig"
    assert store.read_prefix("mme/absent.tar.gz", 4) is None


def test_a_connection_string_of_another_account_is_refused(azurite: str) -> None:
    with pytest.raises(StoreError) as info:
        open_store("az://otheraccount/releases/r1")
    assert "'devstoreaccount1', not 'otheraccount'" in info.value.message
    assert "AZURE_STORAGE_CONNECTION_STRING" in (info.value.hint or "")


def test_a_missing_container_names_the_fix(azurite: str) -> None:
    store = open_store("az://devstoreaccount1/no-such-container/r1")
    with pytest.raises(StoreError) as info:
        store.put_bytes("manifest.json", b"{}")
    assert "'no-such-container' does not exist" in info.value.message
    assert "az storage container create" in (info.value.hint or "")


def test_unreachable_az_endpoint_names_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import azurite_connection

    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite_connection("127.0.0.1:9"))
    monkeypatch.setenv("TDK_AZ_MAX_ATTEMPTS", "1")
    store = open_store("az://devstoreaccount1/releases/x")
    with pytest.raises(StoreError) as info:
        store.get_bytes("manifest.json")
    assert "az://devstoreaccount1/releases/x/manifest.json" in info.value.message
    assert "no answer in 1 attempt(s)" in info.value.message
    assert "TDK_AZ_CONNECT_TIMEOUT" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TDK_AZ_BLOCK_SIZE", "1024"),
        ("TDK_AZ_READ_TIMEOUT", "soon"),
        ("TDK_AZ_MAX_ATTEMPTS", "0"),
        ("TDK_AZ_COPY_TIMEOUT", "-1"),
    ],
)
def test_bad_az_setting_names_the_variable(
    name: str, value: str, azurite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        open_store("az://devstoreaccount1/releases/x")
    assert name in info.value.message and value in info.value.message


def test_a_malformed_connection_string_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", "not a connection string")
    with pytest.raises(StoreError) as info:
        open_store("az://devstoreaccount1/releases/x")
    assert "is not a storage connection string" in info.value.message


def test_no_azure_sign_in_is_one_line_naming_az_login(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without credentials, `tdk build` for an Azure stack and `tdk package --release az://...`
    printed DefaultAzureCredential's dozen-line warning once per retry (~50 lines, 17 s) before
    the kit's error (issue 49 item 7): now one error line naming `az login`, asked once."""
    import os

    from typer.testing import CliRunner

    from cli.main import app

    for name in [n for n in os.environ if n.startswith(("AZURE_", "MSI_", "IDENTITY_"))]:
        monkeypatch.delenv(name)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no az, azd or pwsh to ask
    monkeypatch.setenv("HOME", str(tmp_path))  # no shared token cache
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    url = "az://nosuchtdkaccount/releases/r1"
    args = ["package", str(sample_repo / "tokenizer"), "--release", url]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "DefaultAzureCredential failed" not in result.stderr, result.stderr
    [error] = [line for line in lines if line.startswith("error:")]
    assert url in error and "no Azure sign-in" in error and "Azure CLI" in error, error
    assert len(lines) <= 3 and "az login" in result.stderr, result.stderr
