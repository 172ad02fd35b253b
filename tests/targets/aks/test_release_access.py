"""What Triton's identity and the engine builder's may do in the release container, asked of the
role conditions the aks stack grants each, and the pods' real copy scripts run against a store
that enforces them (a stand-in ``az``, ``fake_az.py``): the sync lists and reads the release,
nothing else; the build Job fetches and uploads its engine-cache entry, nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infra.config import parse_release_url
from infra.targets.aks import arm
from infra.targets.aks import builders as b
from tests.targets.aks.abac import Request, allows
from tests.targets.aks.fake_az import BLOBS, PATH, PREFIX, READ

ROOT = Path(__file__).resolve().parents[3]
CONTRIBUTOR_ACTIONS = [READ, *(f"{BLOBS}/{a}" for a in ("write", "add/action", "delete"))]


def _blob(url: str = "az://tdkreleases/releases/v1") -> b.BlobRelease:
    return b.blob_release(parse_release_url("releaseUrl", url, ("az",)))


def _list(prefix: str | None) -> Request:
    return Request(READ, "Blob.List", {PREFIX: prefix} if prefix is not None else {})


def _read(path: str) -> Request:
    return Request(READ, None, {PATH: path})


def test_the_reader_lists_and_reads_under_the_release_prefix_only() -> None:
    condition = arm.release_read_condition(_blob())
    assert allows(condition, _list("v1/repository/")) and allows(condition, _list("v1/"))
    assert allows(condition, _read("v1/repository/m/1/model.onnx"))
    for outside in ("v2/", "", "v10/", "v1"):
        assert not allows(condition, _list(outside)), outside
    assert not allows(condition, _list(None))  # a listing of the whole container
    assert not allows(condition, _read("v2/repository/m/config.pbtxt"))
    # a release at the container's root reads the container: the role's scope, no condition
    assert arm.release_read_condition(_blob("az://acct123/releases")) is None


def test_the_engine_cache_writer_lists_reads_and_writes_only_engines() -> None:
    condition = arm.engine_write_condition(_blob())
    entry = "v1/engines/abc/"
    assert allows(condition, _list(entry)) and allows(condition, _read(entry + "plan.json"))
    for action in ("write", "add/action", "delete", "move/action"):
        request = Request(f"{BLOBS}/{action}", None, {PATH: entry + "model.plan"})
        assert allows(condition, request), action
        outside = Request(f"{BLOBS}/{action}", None, {PATH: "v1/repository/m/config.pbtxt"})
        assert not allows(condition, outside), action
    assert not allows(condition, _list("v1/")) and not allows(condition, _list(None))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The container ``releases`` holding release v1 and another team's v2, and an ``az`` on
    PATH that serves it only as one identity's role assignments allow (``_run``)."""
    root = tmp_path / "store"
    for release in ("v1", "v2"):
        for name in ("repository/m/config.pbtxt", "repository/m/1/model.onnx", "manifest.json"):
            path = root / "releases" / release / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{release}/{name}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    az = bin_dir / "az"
    az.write_text(f'#!/bin/sh\nexec {sys.executable} -m tests.targets.aks.fake_az "$@"\n')
    az.chmod(0o755)
    return root


#: the role assignments of each identity, as the aks stack grants them (stack.py)
TRITON = "triton"
BUILDER = "builder"


def _grants(who: str) -> list[dict[str, object]]:
    blob = _blob()
    if who == TRITON:
        return [{"actions": [READ], "condition": arm.release_read_condition(blob)}]
    return [{"actions": CONTRIBUTOR_ACTIONS, "condition": arm.engine_write_condition(blob)}]


def _run(script: str, store: Path, who: str = TRITON) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "FAKE_AZ_GRANTS": json.dumps(_grants(who)),
        "PATH": f"{store.parent / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "FAKE_AZ_ROOT": str(store),
        "AZURE_CLIENT_ID": "c",
        "AZURE_TENANT_ID": "t",
        "AZURE_FEDERATED_TOKEN_FILE": "/dev/null",
    }
    return subprocess.run(
        ["sh", "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_model_sync_copies_the_release_under_the_role_conditions(
    store: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "models"
    dest.mkdir()
    _, _, script = b.sync_command(_blob(), str(dest))
    done = _run(script, store)
    assert done.returncode == 0, done.stderr
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert files == ["m/1/model.onnx", "m/config.pbtxt"]  # no staging left, no other release
    assert (dest / "m/config.pbtxt").read_text() == "v1/repository/m/config.pbtxt"


def test_a_sync_that_lists_the_whole_container_is_denied(store: Path, tmp_path: Path) -> None:
    """Why the sync names its prefix: download-batch lists the container prefix-less first."""
    script = (
        "az storage blob download-batch --auth-mode login --account-name tdkreleases "
        f"--source releases --pattern 'v1/repository/*' --destination {tmp_path}"
    )
    done = _run(script, store)
    assert done.returncode != 0 and "AuthorizationPermissionMismatch" in done.stderr


def test_an_engine_entry_is_fetched_under_the_role_conditions(store: Path, tmp_path: Path) -> None:
    entry = store / "releases/v1/engines/abc/input"
    entry.mkdir(parents=True)
    (entry / "model.onnx").write_text("onnx")
    work = tmp_path / "work"
    work.mkdir()
    done = _run(b.download_script(_blob(), "engines/abc/input", str(work)), store, BUILDER)
    assert done.returncode == 0, done.stderr
    assert (work / "model.onnx").read_text() == "onnx"
