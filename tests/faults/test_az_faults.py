"""``tdk package --release az://...`` through a faulty proxy in front of Azurite: every fault ends
in a clear error in bounded time, with no manifest and no blob cut short (blocks become a blob
only when the block list is committed), and a re-publish through Azurite itself completes."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.manifest import Manifest
from tests.conftest import azurite_connection
from tests.faults.proxy import FaultProxy, Mode
from tests.packager.test_stores import new_container

runner = CliRunner(env={"COLUMNS": "200"})
MIB = 1024 * 1024
READ_TIMEOUT = 1.0
ATTEMPTS = 2
# Every call may take ATTEMPTS x READ_TIMEOUT plus the SDK's backoff (1 s +- 1 s between
# tries); the largest failing run makes a few such calls one after another. Generous for a
# 2-core machine, far below "forever".
BOUND_S = 30.0
WEIGHTS = 12 * MIB


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_AZ_BLOCK_SIZE", str(4 * MIB))  # the weights go up as 3 blocks
    monkeypatch.setenv("TDK_AZ_READ_TIMEOUT", str(READ_TIMEOUT))
    monkeypatch.setenv("TDK_AZ_CONNECT_TIMEOUT", "1")
    monkeypatch.setenv("TDK_AZ_MAX_ATTEMPTS", str(ATTEMPTS))


@pytest.fixture
def container(azurite: str, limits: None) -> Any:
    from azure.storage.blob import ContainerClient

    _, name = new_container(azurite).split("/")
    return ContainerClient.from_connection_string(azurite, name)


@pytest.fixture
def big_repo(sample_repo: Path, tmp_path: Path) -> Path:
    """The tokenizer with 12 MiB of incompressible weights: blocks, both as an archive and as
    a repository file."""
    repo = tmp_path / "repo"
    shutil.copytree(sample_repo / "tokenizer", repo / "tokenizer")
    (repo / "tokenizer" / "1" / "weights.bin").write_bytes(os.urandom(WEIGHTS))
    return repo


def _package(repo: Path, url: str, endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``tdk package`` to ``url`` with the Blob endpoint at ``endpoint``; (result, seconds)."""
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite_connection(endpoint))
    start = time.monotonic()
    result = runner.invoke(app, ["package", str(repo), "--release", url, "--json"])
    return result, time.monotonic() - start


def _sizes(container: Any) -> dict[str, int]:
    return {blob.name: int(blob.size) for blob in container.list_blobs()}


def _through(mode: Mode, limit: int, azurite: str) -> FaultProxy:
    port = int(azurite.split("BlobEndpoint=http://", 1)[1].split("/")[0].rsplit(":", 1)[1])
    return FaultProxy(port, mode, limit)


def _assert_no_release_and_nothing_cut_short(container: Any) -> None:
    sizes = _sizes(container)
    assert "releases/r1/manifest.json" not in sizes
    weights = "releases/r1/repository/tokenizer-0/1/weights.bin"
    assert sizes.get(weights, WEIGHTS) == WEIGHTS  # absent or whole, never a part


def _republish_completes(
    big_repo: Path, url: str, azurite: str, monkeypatch: pytest.MonkeyPatch, container: Any
) -> None:
    endpoint = azurite.split("BlobEndpoint=http://", 1)[1].split("/")[0]
    again, _ = _package(big_repo, url, endpoint, monkeypatch)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["manifest_written"] is True
    body = container.get_blob_client("releases/r1/manifest.json").download_blob().readall()
    assert [m.target_model for m in Manifest.from_json(body).models] == ["tokenizer-0.tar.gz"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("mode", "limit"),
    [
        pytest.param("die_after", 8 * MIB, id="endpoint-dies-mid-upload"),
        pytest.param("cut_after", MIB, id="connections-cut-mid-block"),
    ],
)
def test_az_upload_cut_short_leaves_no_manifest_then_republish_completes(
    container: Any,
    big_repo: Path,
    azurite: str,
    monkeypatch: pytest.MonkeyPatch,
    mode: Mode,
    limit: int,
) -> None:
    """The endpoint dies after 8 MiB; or it stays up but every connection dies after 1 MiB,
    so each 4 MiB block fails its attempts while small requests (the lock, the ledger) pass."""
    url = f"az://devstoreaccount1/{container.container_name}/releases/r1"
    with _through(mode, limit, azurite) as proxy:
        failed, elapsed = _package(big_repo, url, f"127.0.0.1:{proxy.port}", monkeypatch)
    assert proxy.died.is_set() is (mode == "die_after")
    assert failed.exit_code == 1, failed.output
    assert "no manifest was written" in failed.output and url in failed.output
    assert elapsed < BOUND_S
    _assert_no_release_and_nothing_cut_short(container)
    _republish_completes(big_repo, url, azurite, monkeypatch, container)


@pytest.mark.timeout(120)
def test_az_endpoint_that_never_answers_fails_clearly_in_bounded_time(
    container: Any, big_repo: Path, azurite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"az://devstoreaccount1/{container.container_name}/releases/r1"
    with _through("stall", 0, azurite) as proxy:
        failed, elapsed = _package(big_repo, url, f"127.0.0.1:{proxy.port}", monkeypatch)
    assert failed.exit_code == 1, failed.output
    text = " ".join(failed.output.split())
    assert url in text and "no answer in 2 attempt(s)" in text
    assert "TDK_AZ_READ_TIMEOUT" in text and "Traceback" not in failed.output
    # two read timeouts and one backoff of at most 2 s, plus start-up
    assert elapsed < ATTEMPTS * READ_TIMEOUT + 2 + 5, elapsed
    assert _sizes(container) == {}
