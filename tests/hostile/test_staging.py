"""Issue 25 item 3: publishes to s3:// and gs:// stage in a directory private to the user
(created 0700, owner checked, under the user's cache), never a fixed path others can enter."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from packager.publish import publish
from packager.stores import open_store
from packager.userdirs import private_dir
from tdk.errors import StoreError

NOBODY = 65534


@pytest.fixture
def s3_url(moto_endpoint: str) -> str:
    import boto3

    name = f"tdk-{os.urandom(4).hex()}"
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket=name)
    return f"s3://{name}/releases/r1"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_s3_publish_stages_in_a_private_directory_under_the_cache(
    s3_url: str, moto_endpoint: str, sample_repo: Path, cache: Path
) -> None:
    seen: list[tuple[int, int, list[str]]] = []

    def phase(description: str, total: int, unit: str = "") -> object:
        if description == "packaging":
            info = (cache / "staging").lstat()
            inside = [p.name for p in (cache / "staging").iterdir()]
            seen.append((info.st_uid, stat.S_IMODE(info.st_mode), inside))
        return lambda _: None

    store = open_store(s3_url, endpoint_url=moto_endpoint)
    publish([sample_repo], store, copies=1, phase=phase)  # type: ignore[arg-type]
    assert len(seen) == 1
    uid, mode, inside = seen[0]
    assert uid == os.getuid() and mode == 0o700
    assert len(inside) == 1 and inside[0].startswith("tdk-staging-")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a directory to another uid")
def test_a_staging_directory_owned_by_another_user_is_refused(
    s3_url: str, moto_endpoint: str, sample_repo: Path, cache: Path
) -> None:
    hostile = cache / "staging"
    hostile.mkdir(parents=True)
    os.chmod(hostile, 0o777)
    os.chown(hostile, NOBODY, NOBODY)
    store = open_store(s3_url, endpoint_url=moto_endpoint)
    with pytest.raises(StoreError) as caught:
        publish([sample_repo], store, copies=1)
    assert str(hostile) in caught.value.message and f"uid {NOBODY}" in caught.value.message
    assert "TDK_CACHE_DIR" in (caught.value.hint or "")
    assert list(hostile.iterdir()) == []  # nothing was staged there
    assert store.list_keys("") == []  # nothing was published


def test_a_symlinked_staging_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "staging").symlink_to(elsewhere)
    with pytest.raises(StoreError, match="not a directory of yours"):
        private_dir(tmp_path / "staging")


def test_our_own_staging_directory_left_open_is_narrowed_to_0700(tmp_path: Path) -> None:
    (tmp_path / "staging").mkdir()
    os.chmod(tmp_path / "staging", 0o777)
    private_dir(tmp_path / "staging")
    assert stat.S_IMODE((tmp_path / "staging").stat().st_mode) == 0o700
