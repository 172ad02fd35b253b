"""Hostile releases against the local endpoint (issue 25 items 2 and 9): every name a manifest
gives is checked with the packager's rules before any file is touched, the manifest is read with
size and depth limits, and an archive download stops at the manifest's size + 1 byte."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.manifest import MANIFEST_MAX_BYTES
from packager.stores import Store, open_store
from packager.stores.capped import fetch_capped
from tdk.errors import StoreError
from tests.hostile.endpoint_helpers import post, snapshot
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import Endpoint, python_endpoint, python_release

runner = CliRunner()
Edit = Callable[[dict[str, Any]], None]


def _model(edit: Callable[[dict[str, Any]], None]) -> Edit:
    return lambda manifest: edit(manifest["models"][0])


def _set(**values: Any) -> Edit:
    return _model(lambda model: model.update(values))


ROWS: list[tuple[str, Edit, str]] = [
    ("contains-absolute", _set(contains=["/abs/model", "sleeper-0"]), "contains '/abs/model'"),
    ("contains-dotdot", _set(contains=["..", "sleeper-0"]), "contains '..'"),
    ("contains-not-served", _set(contains=["other"]), "does not end with"),
    ("name-dotdot", _set(name="../x", target_model="../x.tar.gz"), "name '../x'"),
    ("name-backslash", _set(name="a\\b"), "name 'a\\\\b'"),
    ("name-newline", _set(name="a\nb"), "name 'a\\nb'"),
    ("name-trailing-newline", _set(name="sleeper-0\n"), "name 'sleeper-0\\n'"),
    ("archive-outside", _set(archive="../../../etc/hostname"), "archive '../../../etc/hostname'"),
    ("archive-other-key", _set(archive="manifest.json"), "archive 'manifest.json'"),
    ("target-model-not-name", _set(target_model="other.tar.gz"), "target_model 'other.tar.gz'"),
    ("size-negative", _set(size=-1), "size -1"),
    ("name-twice", lambda m: m["models"].append(dict(m["models"][0])), "appears twice"),
]


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return python_release(tmp_path, "sleeper")


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def _check(store: Path) -> Any:
    return runner.invoke(app, ["local", "check", "--release", str(store)])


@pytest.mark.parametrize(("edit", "fragment"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_bad_name_in_the_manifest_is_refused_before_any_file_is_touched(
    release: Path, tmp_path: Path, state_dir: Path, edit: Edit, fragment: str
) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    edit(manifest)
    (release / "manifest.json").write_text(json.dumps(manifest))
    before = snapshot(tmp_path)
    result = _check(release)
    assert result.exit_code == 1, result.output
    assert "models[0]" in result.output or "models[1]" in result.output, result.output
    assert fragment in result.output, result.output
    assert "re-package" in result.output and "Traceback" not in result.output
    assert snapshot(tmp_path) == before  # nothing written, here or beside the store


def test_a_deeply_nested_manifest_is_refused(release: Path, state_dir: Path) -> None:
    (release / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    result = _check(release)
    assert result.exit_code == 1, result.output
    assert "nested more than 32 deep" in result.output and "Traceback" not in result.output


def test_a_manifest_linked_to_dev_zero_is_refused(release: Path, state_dir: Path) -> None:
    """Issue 36: a device is refused before it is opened (it was read up to the cap)."""
    (release / "manifest.json").unlink()
    (release / "manifest.json").symlink_to("/dev/zero")
    result = _check(release)
    assert result.exit_code == 1, result.output
    assert "not a regular file" in result.output


def test_a_huge_manifest_is_refused_at_the_cap(release: Path, state_dir: Path) -> None:
    with (release / "manifest.json").open("r+b") as handle:
        handle.truncate(MANIFEST_MAX_BYTES + 10)  # sparse: no disk used
    result = _check(release)
    assert result.exit_code == 1, result.output
    assert f"larger than {MANIFEST_MAX_BYTES} bytes" in result.output


def test_fetch_stops_one_byte_past_the_size(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    (store_dir / "mme").mkdir(parents=True)
    (store_dir / "mme" / "m.tar.gz").write_bytes(b"z" * 5000)
    dest = tmp_path / "out"
    size, _ = fetch_capped(open_store(str(store_dir)), "mme/m.tar.gz", dest, 1000)
    assert size == 1001 and dest.stat().st_size == 1001


def test_fetch_refuses_a_device(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    (store_dir / "mme").mkdir(parents=True)
    (store_dir / "mme" / "m.tar.gz").symlink_to("/dev/zero")
    with pytest.raises(StoreError, match="a character device, not a file"):
        fetch_capped(open_store(str(store_dir)), "mme/m.tar.gz", tmp_path / "out", 1000)
    assert not (tmp_path / "out").exists()


# -- through the running endpoint --------------------------------------------------------------


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    _runtime_or_skip()
    with python_endpoint(tmp_path_factory.mktemp("endpoint"), "sleeper", copies=3) as running:
        yield running


def _invoke(endpoint: Endpoint, target_model: str) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", "X-Amzn-SageMaker-Target-Model": target_model}
    body = {"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [0.0]}]}
    status, document, _ = post(endpoint.url, headers, json.dumps(body).encode())
    return status, document


def _staged(endpoint: Endpoint) -> list[str]:
    staging = endpoint.state_dir / "local-local" / "staging"
    return sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())


@pytest.mark.e2e
def test_an_archive_linked_to_dev_zero_is_refused(endpoint: Endpoint) -> None:
    model = endpoint.manifest.by_target_model("sleeper-0.tar.gz")
    archive = endpoint.store / model.archive
    archive.unlink()
    archive.symlink_to("/dev/zero")
    status, document = _invoke(endpoint, model.target_model)
    assert status == 424, document
    assert "a character device, not a file" in document["message"]
    assert _staged(endpoint) == []  # no download, no .part left behind


@pytest.mark.e2e
def test_an_archive_linked_to_another_file_reveals_nothing_of_it(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    model = endpoint.manifest.by_target_model("sleeper-1.tar.gz")
    secret = tmp_path / "id_rsa"
    secret.write_bytes(os.urandom(model.size))  # same size: only the digest differs
    archive = endpoint.store / model.archive
    archive.unlink()
    archive.symlink_to(secret)
    status, document = _invoke(endpoint, model.target_model)
    assert status == 424, document
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    text = json.dumps(document)
    assert "does not match the manifest's sha256" in text
    assert all(digest[i : i + 8] not in text for i in range(0, 64, 8)), text
    assert _staged(endpoint) == []
    assert _invoke(endpoint, "sleeper-2.tar.gz")[0] == 200  # the others still serve


def _remote_store(which: str, request: pytest.FixtureRequest) -> Store:
    """An empty release root in a fresh bucket (moto) or container (Azurite)."""
    if which == "az":
        from tests.packager.test_stores import new_container

        return open_store(f"az://{new_container(request.getfixturevalue('azurite'))}/r1")
    import boto3

    endpoint = request.getfixturevalue("moto_endpoint")
    bucket = f"tdk-{os.urandom(4).hex()}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return open_store(f"s3://{bucket}/r1", endpoint_url=endpoint)


@pytest.mark.parametrize("which", ["s3", "az"])
def test_a_remote_download_stops_past_the_size_and_leaves_no_part(
    which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Remote stores: the download is stopped once it reports more than the size."""
    store = _remote_store(which, request)
    payload = os.urandom(3 * 1024 * 1024)
    store.put_bytes("mme/m.tar.gz", payload)
    dest = tmp_path / "dl" / "m.tar.gz"
    dest.parent.mkdir()
    size, digest = fetch_capped(store, "mme/m.tar.gz", dest, 1000)
    assert size == 1001 and digest == ""
    exact = fetch_capped(store, "mme/m.tar.gz", dest, len(payload))
    assert exact == (len(payload), hashlib.sha256(payload).hexdigest())
    dest.unlink()
    assert list(dest.parent.iterdir()) == []  # no .part, whichever way it ended
