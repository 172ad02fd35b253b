"""A decoupled copy (no mme/ archive) on the local endpoint: served from the release's
repository/ files, each path checked and each file verified against the manifest before use;
a hostile manifest or store is refused with nothing written outside the endpoint's work dir."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.local import cache
from infra.targets.local.repo_files import FETCHING
from packager.manifest import MANIFEST_NAME, Manifest
from packager.stores import open_store
from tdk.errors import TdkError
from tests.conftest import ROOT
from tests.hostile.endpoint_helpers import snapshot
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import make_release, start_endpoint
from tests.model_repos.llm_repo import llm_repo

runner = CliRunner()
Files = Callable[[dict[str, str]], None]
EVIL = "0" * 64


def _release(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_release(llm_repo(tmp_path / "repo"), store, 1)
    return store


def _edit_files(store: Path, edit: Files) -> None:
    manifest = json.loads((store / MANIFEST_NAME).read_text())
    edit(manifest["models"][0]["files"])
    (store / MANIFEST_NAME).write_text(json.dumps(manifest))


def _add(rel: str) -> Files:
    return lambda files: files.update({rel: EVIL})


PATHS: list[tuple[str, Files, str]] = [
    ("dotdot", _add("../x"), "'../x' is not a relative path"),
    ("dotdot-inside", _add("llm-0/../../x"), "'llm-0/../../x' is not a relative path"),
    ("absolute", _add("/tmp/x"), "'/tmp/x' is not a relative path"),
    ("other-model", _add("other/config.pbtxt"), "'other/config.pbtxt' is not a file inside"),
    ("model-dir-itself", _add("llm-0"), "'llm-0' is not a file inside"),
    ("backslash", _add("llm-0/a\\b"), "backslash"),
    ("newline", _add("llm-0/a\nb"), "control character"),
    ("not-a-sha", lambda f: f.update({k: "abc" for k in f}), "is not a sha256"),
    ("empty", lambda f: f.clear(), "files is empty"),
]


@pytest.mark.parametrize(("edit", "fragment"), [r[1:] for r in PATHS], ids=[r[0] for r in PATHS])
def test_a_bad_files_path_is_refused_before_any_file_is_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Files, fragment: str
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    store = _release(tmp_path)
    _edit_files(store, edit)
    before = snapshot(tmp_path)
    result = runner.invoke(app, ["local", "check", "--release", str(store)])
    assert result.exit_code == 1, result.output
    assert "models[0]: files" in result.output and fragment in result.output, result.output
    assert "re-package" in result.output and "Traceback" not in result.output
    assert snapshot(tmp_path) == before


def _install(store: Path, work: Path) -> cache.Extracted:
    entry = Manifest.from_json((store / MANIFEST_NAME).read_text()).by_name("llm-0")
    (work / "repository").mkdir(parents=True, exist_ok=True)  # the endpoint's, made at start
    files = open_store(str(store))
    return cache.install(files, entry, work / "repository", work / "staging", 10**7)


def _nothing_left(tmp_path: Path, work: Path, before: dict[str, tuple[int, int]]) -> None:
    after = snapshot(tmp_path)
    outside = {path for path in after if not path.startswith(str(work) + "/")}
    assert outside == set(before), sorted(outside ^ set(before))
    inside = [p for p in work.rglob("*") if not p.is_dir()]
    assert inside == [], inside  # no file, no .part, no half-filled model directory


@pytest.mark.parametrize("path", ["../x", "/tmp/x", "llm-0/../../x"])
def test_install_refuses_an_unsafe_path_even_without_the_manifest_check(
    tmp_path: Path, path: str
) -> None:
    store = _release(tmp_path)
    (tmp_path / "x").write_text("outside")  # what ../x would name from the store's repository/
    _edit_files(store, _add(path))
    work = tmp_path / "work"
    before = snapshot(tmp_path)
    with pytest.raises(TdkError, match="is not a relative path"):
        _install(store, work)
    _nothing_left(tmp_path, work, before)


def test_a_file_whose_sha256_does_not_match_is_refused(tmp_path: Path) -> None:
    store = _release(tmp_path)
    (store / "repository" / "llm-0" / "1" / "model.py").write_text("import os  # replaced\n")
    work = tmp_path / "work"
    before = snapshot(tmp_path)
    with pytest.raises(TdkError, match=r"model\.py does not match the manifest's sha256"):
        _install(store, work)
    _nothing_left(tmp_path, work, before)


def test_a_file_linked_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    store = _release(tmp_path)
    model = store / "repository" / "llm-0" / "1" / "model.py"
    model.unlink()
    model.symlink_to("/dev/zero")  # not a regular file: the store does not list it
    work = tmp_path / "work"
    with pytest.raises(TdkError, match=r"model\.py is missing from the store"):
        _install(store, work)
    assert [p for p in work.rglob("*") if not p.is_dir()] == []


def test_a_missing_file_and_a_full_cache_are_refused(tmp_path: Path) -> None:
    store = _release(tmp_path)
    entry = Manifest.from_json((store / MANIFEST_NAME).read_text()).by_name("llm-0")
    files = open_store(str(store))
    with pytest.raises(TdkError, match="of disk cache left") as full:
        cache.install(files, entry, tmp_path / "w" / "repository", tmp_path / "w" / "s", 10)
    assert full.value.hint == cache.CACHE_HINT
    (store / "repository" / "llm-0" / "config.pbtxt").unlink()
    with pytest.raises(TdkError, match=r"config\.pbtxt is missing from the store"):
        cache.install(files, entry, tmp_path / "w" / "repository", tmp_path / "w" / "s", 10**7)


def test_install_places_the_verified_files_and_counts_their_sizes(tmp_path: Path) -> None:
    store = _release(tmp_path)
    result = _install(store, tmp_path / "work")
    served = tmp_path / "work" / "repository" / "llm-0"
    assert result.dirs == ("llm-0",)
    assert result.size == sum(p.stat().st_size for p in served.rglob("*") if p.is_file())
    assert (served / "config.pbtxt").is_file() and (served / "1" / "model.py").is_file()
    assert not list((tmp_path / "work" / "staging").rglob(FETCHING))


# -- a real `tdk package` through the local endpoint -------------------------------------------


@pytest.mark.e2e
def test_packaged_llm_streams_on_the_local_endpoint(tmp_path: Path) -> None:
    _runtime_or_skip()
    repo = tmp_path / "repo"
    generate = [sys.executable, str(ROOT / "model_repos" / "generate.py"), "--out", str(repo)]
    subprocess.run([*generate, "--with", "llm"], check=True, capture_output=True, timeout=120)
    store = tmp_path / "store"
    packaged = runner.invoke(app, ["package", str(repo), "--release", str(store)])
    assert packaged.exit_code == 0, packaged.output
    entry = Manifest.from_json((store / MANIFEST_NAME).read_text()).by_name("llm-0")
    assert entry.archive == "" and entry.mme_left_out  # really no archive: repository/ only
    endpoint = start_endpoint(store, tmp_path / "state")
    try:
        env = {"TDK_STATE_DIR": str(endpoint.state_dir)}
        args = ["invoke", "--target-model", "llm-0.tar.gz", "--prompt", "hello", "--stream"]
        result = runner.invoke(app, [*args, "--max-tokens", "4", "--json"], env=env)
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["chunks"] == 4
        staging = endpoint.state_dir / "local-local" / "staging"
        assert [p for p in staging.rglob("*") if not p.is_dir()] == []  # no .part left
        mme = _mme_invoke(endpoint.client())
        assert mme["Code"] == "ModelError" and "decoupled" in mme["Message"]
    finally:
        endpoint.stop()


def _mme_invoke(client: Any) -> dict[str, str]:
    """A SageMaker MME call of the decoupled copy: Triton's own refusal, as SageMaker's error."""
    from botocore.exceptions import ClientError

    body = {"inputs": [{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": ["x"]}]}
    with pytest.raises(ClientError) as refused:
        client.invoke_endpoint(
            EndpointName="local",
            TargetModel="llm-0.tar.gz",
            ContentType="application/json",
            Body=json.dumps(body),
        )
    error = refused.value.response["Error"]
    return {"Code": str(error.get("Code")), "Message": str(error.get("Message"))}
