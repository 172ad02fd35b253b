"""Issue 36 S3: a destination is ours or refused. Another user plants links or folders of their
own in a shared ``--release``; ``tdk package`` (``--prune`` included) must neither write into the
folder a link points at nor delete from it. One row per planted layout; the victim's folder is
snapshotted before and after."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.stores import open_store
from packager.stores.file import STAGING_DIR
from tdk.errors import StoreError
from tests.hostile.snapshot import changes, snapshot

runner = CliRunner(env={"COLUMNS": "200"})
OTHER_UID = 65534  # nobody
_AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root")
LEDGER = '{{"format_version": 1, "keys": ["{key}"]}}\n'


@dataclass(frozen=True)
class Planted:
    link: str  # the path in the destination made a link to the victim's folder ("" for none)
    ledger_key: str  # what the planted ledger says tdk wrote
    fragment: str
    give_away: str = ""  # a path in the destination chowned to another user


ROWS = {
    "mme-link": Planted("mme", "mme/sub/keep.txt", "mme is a symbolic link"),
    "repository-link": Planted("repository", "repository/sub/keep.txt", "is a symbolic link"),
    "model-dir-link": Planted(
        "repository/tokenizer-0", "repository/tokenizer-0/sub/keep.txt", "is a symbolic link"
    ),
    "version-dir-link": Planted(
        "repository/tokenizer-0/1", "repository/tokenizer-0/1/sub/keep.txt", "is a symbolic link"
    ),
    "staging-link": Planted(STAGING_DIR, "mme/x.tar.gz", "is a symbolic link"),
    "deep-in-mme": Planted("mme/sub", "mme/sub/keep.txt", "is a symbolic link"),
}
FOREIGN = {
    "root-of-another-user": Planted("", "mme/x.tar.gz", "belongs to another user", "."),
    "mme-of-another-user": Planted("", "mme/x.tar.gz", "belongs to another user", "mme"),
}


def _plant(tmp_path: Path, row: Planted) -> tuple[Path, Path]:
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub" / "keep.txt").write_text("the victim's\n")
    victim.chmod(0o700)
    dest = tmp_path / "shared"
    dest.mkdir()
    if row.link:
        (dest / row.link).parent.mkdir(parents=True, exist_ok=True)
        (dest / row.link).symlink_to(victim, target_is_directory=True)
    if row.give_away:
        (dest / row.give_away).mkdir(exist_ok=True)
        os.chown(dest / row.give_away, OTHER_UID, OTHER_UID)
    (dest / "tdk-ledger.json").write_text(LEDGER.format(key=row.ledger_key))
    return victim, dest


def _check_refused(row: Planted, tmp_path: Path, sample_repo: Path) -> None:
    victim, dest = _plant(tmp_path, row)
    before = snapshot(victim)
    args = ["package", str(sample_repo / "tokenizer"), "--release", f"file://{dest}", "--prune"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert row.fragment in " ".join(result.output.split()) and "hint:" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert changes(before, snapshot(victim)) == {"added": [], "removed": [], "changed": []}
    assert not (dest / "manifest.json").exists()


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_planted_link_in_the_destination_is_refused(
    name: str, tmp_path: Path, sample_repo: Path
) -> None:
    _check_refused(ROWS[name], tmp_path, sample_repo)


@_AS_ROOT
@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_a_destination_of_another_user_is_refused(
    name: str, tmp_path: Path, sample_repo: Path
) -> None:
    _check_refused(FOREIGN[name], tmp_path, sample_repo)


def _put(store: object) -> None:
    store.put_bytes("mme/new.tar.gz", b"x")  # type: ignore[attr-defined]


def _delete(store: object) -> None:
    store.delete("mme/sub/keep.txt")  # type: ignore[attr-defined]


def _create(store: object) -> None:
    store.create_exclusive("mme/sub/lock", b"x")  # type: ignore[attr-defined]


def _list(store: object) -> None:
    store.list_sizes("mme/")  # type: ignore[attr-defined]


def _read(store: object) -> None:
    store.get_bytes("mme/sub/keep.txt")  # type: ignore[attr-defined]


STORE_CALLS: dict[str, Callable[[object], None]] = {
    "put": _put,
    "delete": _delete,
    "create-exclusive": _create,
    "list": _list,
    "read": _read,
}


@pytest.mark.parametrize("call", sorted(STORE_CALLS))
def test_a_link_swapped_in_after_the_checks_is_never_followed(call: str, tmp_path: Path) -> None:
    """The up-front check sees a real folder; another user swaps it for a link before the
    write or delete: the store reaches every folder without following links, so it refuses."""
    victim, dest = _plant(tmp_path, Planted("", "mme/sub/keep.txt", ""))
    store = open_store(f"file://{dest}")
    assert store.unsafe_root(prune=True) is None
    (dest / "mme").symlink_to(victim, target_is_directory=True)  # the swap
    before = snapshot(victim)
    with store.staging(), pytest.raises(StoreError, match="is a symbolic link") as info:
        STORE_CALLS[call](store)
    assert "hint:" in str(info.value)
    assert changes(before, snapshot(victim)) == {"added": [], "removed": [], "changed": []}


def test_a_link_to_a_file_in_the_release_is_replaced_not_refused(
    tmp_path: Path, sample_repo: Path
) -> None:
    """Only links to folders are refused: a link where tdk writes a file is replaced."""
    dest = tmp_path / "release"
    (dest / "mme").mkdir(parents=True)
    outside = tmp_path / "outside.tar.gz"
    outside.write_bytes(b"someone else's")
    (dest / "mme" / "tokenizer-0.tar.gz").symlink_to(outside)
    args = ["package", str(sample_repo / "tokenizer"), "--release", f"file://{dest}", "--prune"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert not (dest / "mme" / "tokenizer-0.tar.gz").is_symlink()
    assert outside.read_bytes() == b"someone else's"
