"""What the kit prints never carries a terminal escape from a name it did not choose (issue 47
item 7): a release prefix, a lock's owner or a model's path holding ESC, BEL, CR, C1 controls
or a newline is printed with those characters escaped, and a newline cannot spoof a table row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from cli.output import Output
from tests.local.local_helpers import make_release

#: sets the terminal's title, clears the screen, a C1 CSI (a URL cannot carry CR or LF: urllib
#: drops them, so the forged row is tested on a table directly)
HOSTILE = "r\x1b]0;owned\x07\x1b[2J\x9b31m"
FORGED = "r1\r\nfile:///forged"


def _no_controls(text: str) -> None:
    assert not any(c in text for c in "\x1b\x07\x9b\r"), repr(text)


def test_releases_escapes_a_hostile_prefix(sample_repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "releases"
    make_release(sample_repo, root / "good", copies=1, only=("tokenizer",))
    shutil.copytree(root / "good", root / HOSTILE)
    result = CliRunner().invoke(app, ["releases", "--store", root.as_uri()])
    assert result.exit_code == 0, result.output
    _no_controls(result.stdout)
    assert "\\x1b]0;owned\\x07" in result.stdout and "\\x9b31m" in result.stdout
    # JSON keeps the name exactly (escaped by JSON itself)
    found = CliRunner().invoke(app, ["releases", "--store", root.as_uri(), "--json"])
    assert any(r["url"].endswith(HOSTILE) for r in json.loads(found.stdout))


def test_validate_report_escapes_a_hostile_model_path(sample_repo: Path, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(sample_repo, tmp_path / "repo"))
    (repo / "tokenizer" / "1" / "link\x1b[2J\x9b").symlink_to("model.py")  # TDK114 names it
    result = CliRunner().invoke(app, ["validate", str(repo)])
    assert result.exit_code == 1, result.output
    assert "TDK114" in result.stdout and "link\\x1b[2J\\x9b" in result.stdout
    _no_controls(result.stdout)


def test_every_message_kind_escapes_controls(capsys: object) -> None:
    out = Output()
    owner = "alice\x1b[1A\x1b[2K\rbob@host\x9d0;t\x07"  # a lock's owner/host as written
    out.info(f"lock held by {owner}")
    out.note(f"waiting for {owner}")
    out.warn(f"stale lock of {owner}")
    out.error(f"publish locked by {owner}", hint=f"ask {owner}")
    out.table("", ["owner"], [[owner]])
    out.text(owner)
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    for stream in (captured.out, captured.err):
        _no_controls(stream)
        assert "\\x1b[1A" in stream and "\\x9d0;t" in stream


def test_a_newline_in_a_cell_does_not_forge_a_row(capsys: object) -> None:
    Output().table("releases", ["release", "created"], [[FORGED, "2026-12-07"]])
    printed = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "r1\\r\\nfile:///forged" in printed
    assert not any(line.strip("│ ").startswith("file:///forged") for line in printed.splitlines())
