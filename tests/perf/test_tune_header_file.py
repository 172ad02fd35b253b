"""``tdk tune --url ... --header-file FILE`` (issue 47 item 1): a Triton whose repository and
config APIs demand a key (``--http-restricted-api``, as every Triton the kit starts) is tuned with
the key read from a file only its owner can read, never from a command line; a file others may
read, a link, a FIFO or a malformed line is refused before anything runs."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime.adapter import adapt_model_dir
from infra.triton_runtime.runtime import TritonProcess
from tests.local.conftest import _runtime_or_skip

runner = CliRunner()
URL = ["tune", "--url", "http://127.0.0.1:9", "--model", "m", "--latency-budget-ms", "10"]


def _file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "headers"
    path.write_text(text)
    path.chmod(mode)
    return path


def _link(tmp_path: Path, target: Path) -> Path:
    (tmp_path / "link").symlink_to(target)
    return tmp_path / "link"


def _fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo")
    return tmp_path / "fifo"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda t: _file(t, "tdk-repository-key: k\n", 0o640), "other users may read or own it"),
        (lambda t: _file(t, "tdk-repository-key k\n"), "line 1: not a `Name: value` header"),
        (lambda t: _file(t, "# nothing\n\n"), "holds no header"),
        (lambda t: _file(t, "a: b\nbad name: v\n"), "line 2: not a `Name: value` header"),
        (lambda t: _file(t, "a: b\x1b[2J\n"), "line 1: not a `Name: value` header"),
        (lambda t: _link(t, _file(t, "a: b\n")), "cannot read it"),
        (_fifo, "cannot read it"),
        (lambda t: t / "missing", "cannot read it"),
    ],
    ids=["group-readable", "no-colon", "empty", "bad-name", "control", "link", "fifo", "missing"],
)
def test_a_header_file_that_is_not_private_and_plain_is_refused_before_anything_runs(
    tmp_path: Path, make: object, said: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    result = runner.invoke(app, [*URL, "--header-file", str(path)])
    assert result.exit_code == 2, result.output
    assert "--header-file" in result.output and said in result.output, result.output
    assert "Traceback" not in result.output


def test_a_header_file_without_url_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "model"
    args = ["tune", str(model), "--latency-budget-ms", "10"]
    result = runner.invoke(app, [*args, "--header-file", str(_file(tmp_path, "a: b\n"))])
    assert result.exit_code == 2 and "--header-file needs --url" in result.output, result.output


@pytest.fixture
def restricted(sample_repo: Path, tmp_path: Path) -> Iterator[TritonProcess]:
    """The kit's Triton, its restricted APIs open only with the per-start key."""
    from infra.triton_runtime.runtime import find_runtime

    _runtime_or_skip()
    shutil.copytree(sample_repo / "image_classifier", tmp_path / "repo" / "image_classifier")
    adapt_model_dir(tmp_path / "repo" / "image_classifier")
    process = TritonProcess(find_runtime(), tmp_path / "repo", tmp_path / "triton")
    loop = asyncio.new_event_loop()
    loop.run_until_complete(process.start())
    try:
        yield process
    finally:
        loop.run_until_complete(process.stop())
        loop.close()


@pytest.mark.e2e
def test_tune_url_reaches_a_restricted_triton_with_the_key_from_a_file(
    restricted: TritonProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    name, key = restricted.repository_headers[0]
    args = ["tune", "--url", restricted.http_url, "--model", "image_classifier", "--json"]
    args += ["--latency-budget-ms", "2000", "--duration", "0.2", "-c", "1", "--search", "full"]
    args += ["--max-windows", "1", "--processes", "1", "--repeats", "0", "--pairs", "0"]
    args += ["--instances", "1", "--max-batch-sizes", "8", "--queue-delays-us", "0"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 1 and "API is restricted" in refused.output, refused.output
    assert "--header-file FILE" in refused.output  # the hint says how
    result = runner.invoke(app, [*args, "--header-file", str(_file(tmp_path, f"{name}: {key}\n"))])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["measurements"] >= 1
