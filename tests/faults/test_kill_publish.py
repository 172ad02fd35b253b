"""``kill -9`` of a running ``tdk package --release file://...``, then a re-publish: nothing of
the killed run is left (no ``.tdk`` names anywhere) and the release is complete."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from packager.manifest import Manifest

runner = CliRunner(env={"COLUMNS": "200"})


def _wait_for(condition: Callable[[], bool], proc: subprocess.Popen[bytes], limit: float) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert proc.poll() is None, "tdk package ended before the condition held"
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.002)  # polling interval, not synchronisation


def _ours(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if ".tdk" in p.name)


def test_kill_9_during_file_publish_then_republish_leaves_nothing(
    sample_repo: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(sample_repo / "tokenizer", repo / "tokenizer")
    # Incompressible weights keep the run busy long enough to be killed mid-way.
    (repo / "tokenizer" / "1" / "weights.bin").write_bytes(os.urandom(48 * 1024 * 1024))
    dest = tmp_path / "release"
    args = ["package", str(repo), "--copies", "6", "--release", f"file://{dest}"]
    tdk = Path(sys.executable).parent / "tdk"
    proc = subprocess.Popen([str(tdk), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        staging = dest / ".tdk-staging"
        _wait_for(lambda: any(staging.glob("tdk-staging-*/*.tar.gz")), proc, 120)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert _ours(dest), "the killed run left nothing to clean up: the test did not interrupt it"
    assert not (dest / "manifest.json").exists()
    served = [p for p in _ours(dest) if "/mme/" in p or "/repository/" in p]
    assert served == [], "partial files inside the served tree"

    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert _ours(dest) == []
    manifest = Manifest.from_json((dest / "manifest.json").read_text())
    assert len(manifest.models) == 6
    for model in manifest.models:
        archive = (dest / model.archive).read_bytes()
        assert hashlib.sha256(archive).hexdigest() == model.sha256
        for rel, sha in model.files.items():
            path = dest / "repository" / rel
            assert hashlib.sha256(path.read_bytes()).hexdigest() == sha


def test_leftovers_of_an_earlier_tdk_version_are_cleaned_not_user_files(
    sample_repo: Path, tmp_path: Path
) -> None:
    """Before this fix a killed publish left ``.tdk-staging-XXXXXXXX`` trees at the root and
    ``.tdk-XXXXXXXX`` partial files next to their targets, inside model version directories."""
    dest = tmp_path / "release"
    args = ["package", str(sample_repo / "tokenizer"), "--release", f"file://{dest}"]
    assert runner.invoke(app, args).exit_code == 0
    version = dest / "repository" / "tokenizer-0" / "1"
    (dest / ".tdk-staging-ab12cd_3" / "x").mkdir(parents=True)
    (version / ".tdk-k2j4h5l6").write_bytes(b"partial")
    (dest / "mme" / ".tdk-zz99yy88").write_bytes(b"partial")
    (version / ".tdk-notes-by-user.txt").write_text("mine")  # not our naming: kept
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert not (dest / ".tdk-staging-ab12cd_3").exists()
    assert not (version / ".tdk-k2j4h5l6").exists()
    assert not (dest / "mme" / ".tdk-zz99yy88").exists()
    assert (version / ".tdk-notes-by-user.txt").read_text() == "mine"


def test_cleanup_leaves_the_staging_of_a_running_publish_alone(
    sample_repo: Path, tmp_path: Path
) -> None:
    """Leftovers are recognised by a lock that dies with their process, not by name alone: a
    second publish to the same destination must not remove a running publish's work."""
    repo = tmp_path / "repo"
    shutil.copytree(sample_repo / "tokenizer", repo / "tokenizer")
    (repo / "tokenizer" / "1" / "weights.bin").write_bytes(os.urandom(48 * 1024 * 1024))
    dest = tmp_path / "release"
    args = ["package", str(repo), "--copies", "6", "--release", f"file://{dest}"]
    tdk = Path(sys.executable).parent / "tdk"
    proc = subprocess.Popen([str(tdk), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        staging = dest / ".tdk-staging"
        _wait_for(lambda: any(staging.glob("tdk-staging-*/*.tar.gz")), proc, 120)
        other = runner.invoke(
            app, ["package", str(sample_repo / "tokenizer"), "--release", f"file://{dest}"]
        )
        assert other.exit_code == 0, other.output
    finally:
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert _ours(dest) == []
