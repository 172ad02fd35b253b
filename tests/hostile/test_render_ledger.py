"""Issue 25 items 5 and 10: a render ledger (committed with GitOps output, so anyone with commit
rights writes it) never makes `tdk render k8s --out DIR` touch a file outside DIR."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
STACK = "gke-dev"


def _render(out: Path) -> tuple[int, str]:
    args = ["render", "k8s", "--stack", STACK, "--out", str(out), "--project-dir", str(ROOT)]
    result = runner.invoke(app, args)
    return result.exit_code, result.output


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    code, output = _render(out)
    assert code == 0, output
    return out


def _ledger(out: Path) -> Path:
    return out / f".tdk-render-{STACK}.ledger"


@pytest.mark.parametrize("kind", ["parent", "absolute", "nested"])
def test_ledger_entry_outside_out_is_refused_and_nothing_is_touched(
    rendered: Path, tmp_path: Path, kind: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"someone's file\n")
    name = {
        "parent": "../victim.txt",
        "absolute": str(victim),
        "nested": "sub/../../victim.txt",
    }[kind]
    ledger = json.loads(_ledger(rendered).read_text())
    ledger["files"][name] = hashlib.sha256(b"someone's file\n").hexdigest()
    _ledger(rendered).write_text(json.dumps(ledger))
    before = {p.name: p.read_bytes() for p in rendered.iterdir()}
    code, output = _render(rendered)
    assert code != 0
    assert victim.read_bytes() == b"someone's file\n"
    assert name in output and "not a file name inside" in output
    assert "Traceback" not in output
    assert {p.name: p.read_bytes() for p in rendered.iterdir()} == before


def test_deeply_nested_ledger_is_a_message(rendered: Path) -> None:
    _ledger(rendered).write_text("[" * 100_000 + "]" * 100_000)
    code, output = _render(rendered)
    assert code != 0
    assert "cannot read the render ledger" in output and "Traceback" not in output


def test_oversized_ledger_is_refused_unread(rendered: Path) -> None:
    with _ledger(rendered).open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)  # sparse: costs no disk
    code, output = _render(rendered)
    assert code != 0
    assert "larger than" in output and "Traceback" not in output
