"""Issue 25 items 9-10: every reader of ``manifest.json`` (and the ledger) parses it bounded —
size and nesting limits before parsing, a store fetch capped — with a message, not a
traceback or an unbounded read. `tdk invoke --release` reads it as the local endpoint does."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import packager.manifest as manifest_module
import packager.stores.capped as capped_module
from cli.main import app
from packager.manifest import JSON_MAX_DEPTH, Ledger, Manifest
from packager.stores import open_store
from packager.stores.capped import read_manifest
from tdk.errors import TdkError

runner = CliRunner()
DEEP = "[" * 200_000 + "]" * 200_000  # past the parser's recursion limit
SHALLOW_BUT_TOO_DEEP = '{"format_version": 1, "models": ' + "[" * 40 + "]" * 40 + "}"


@pytest.mark.parametrize("text", [DEEP, DEEP.encode(), SHALLOW_BUT_TOO_DEEP])
def test_a_deep_manifest_is_refused_before_parsing(text: str | bytes) -> None:
    with pytest.raises(TdkError) as info:
        Manifest.from_json(text, "store/manifest.json")
    assert f"nested more than {JSON_MAX_DEPTH} deep" in info.value.message
    assert "store/manifest.json" in info.value.message
    assert "RecursionError" not in info.value.message


def test_a_deep_ledger_is_refused_before_parsing() -> None:
    with pytest.raises(TdkError) as info:
        Ledger.from_json(DEEP, "store/tdk-ledger.json")
    assert f"nested more than {JSON_MAX_DEPTH} deep" in info.value.message


def test_brackets_inside_strings_do_not_count(sample_repo: Path, tmp_path: Path) -> None:
    from packager.publish import publish

    text = publish([sample_repo / "tokenizer"], open_store(str(tmp_path / "r")), 1).manifest
    raw = text.to_json().replace('"created_at": "', '"created_at": "' + "[{" * 100, 1)
    assert Manifest.from_json(raw).created_at.startswith("[{[{")


def test_an_oversized_manifest_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest_module, "MANIFEST_MAX_BYTES", 100)
    with pytest.raises(TdkError) as info:
        Manifest.from_json(" " * 101 + "{}", "m.json")
    assert "larger than 100 bytes" in info.value.message


def test_read_manifest_stops_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store's manifest.json linked to a large file: read up to the cap + 1 byte, refused."""
    monkeypatch.setattr(manifest_module, "MANIFEST_MAX_BYTES", 1000)
    monkeypatch.setattr(capped_module, "MANIFEST_MAX_BYTES", 1000)
    big = tmp_path / "big"
    big.write_bytes(b" " * 50_000)
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "manifest.json").symlink_to(big)
    with pytest.raises(TdkError) as info:
        read_manifest(open_store(str(store_dir)))
    assert "larger than 1000 bytes" in info.value.message


@pytest.mark.parametrize(
    ("body", "fragment"),
    [("big", "larger than 1000 bytes"), ("deep", f"nested more than {JSON_MAX_DEPTH} deep")],
)
def test_invoke_reads_the_manifest_bounded(
    body: str, fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from packager.stores.file import FileStore

    def unbounded(self: FileStore, key: str) -> bytes:
        raise AssertionError(f"{key} read whole, without a cap")

    monkeypatch.setattr(FileStore, "get_bytes", unbounded)
    monkeypatch.setattr(manifest_module, "MANIFEST_MAX_BYTES", 1000)
    monkeypatch.setattr(capped_module, "MANIFEST_MAX_BYTES", 1000)
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    text = " " * 5000 if body == "big" else "[" * 100 + "]" * 100
    (store_dir / "manifest.json").write_text(text)
    result = runner.invoke(
        app,
        [
            "invoke",
            "--target",
            "gke",
            "--url",
            "http://127.0.0.1:9",
            "--release",
            str(store_dir),
            "--target-model",
            "m-0",
        ],
    )
    assert result.exit_code != 0
    assert fragment in result.output
    assert "Traceback" not in result.output


def test_invoke_example_of_absurd_dims_is_refused_before_allocating(
    sample_repo: Path, tmp_path: Path
) -> None:
    """dims [100000, 100000, 100000] asked numpy for 3.6 PiB: a traceback (issue 47 item 7)."""
    import json

    from packager.publish import publish

    store_dir = tmp_path / "store"
    publish([sample_repo / "image_classifier"], open_store(str(store_dir)), 1)
    manifest = json.loads((store_dir / "manifest.json").read_text())
    model = manifest["models"][0]
    model["inputs"][0]["dims"] = [100000, 100000, 100000]
    (store_dir / "manifest.json").write_text(json.dumps(manifest))
    args = ["--url", "http://127.0.0.1:9", "--release", str(store_dir), "--example"]
    result = runner.invoke(
        app, ["invoke", "--target", "gke", *args, "--target-model", model["target_model"]]
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "[1, 100000, 100000, 100000]" in text and "over 256 MiB" in text, text
    assert "--input" in text and "Traceback" not in result.output
