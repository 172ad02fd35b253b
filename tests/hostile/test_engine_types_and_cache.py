"""Issue 36 items 5 and 6: a TensorRT-LLM ``model.yaml``'s ``triton_config`` is type-checked
as the LLM-API model.py reads it; an edited digest-cache entry is dropped and recomputed (it
made every later package fail), and the cache stays whole when two publishes run at once."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.digests import CACHE_FILE
from tests.validate.llm import corpus as c

runner = CliRunner(env={"COLUMNS": "300"})
ROOT = Path(__file__).resolve().parents[2]
SHIPPED = "triton_config:\n  max_batch_size: 0\n  decoupled: False\n"

TRITON_CONFIGS = {
    "max-batch-size-text": ("triton_config: {max_batch_size: abc, decoupled: false}", "abc"),
    "max-batch-size-negative": ("triton_config: {max_batch_size: -1, decoupled: false}", "-1"),
    "max-batch-size-fraction": ("triton_config: {max_batch_size: 2.5, decoupled: false}", "2.5"),
    "decoupled-text": ("triton_config: {max_batch_size: 0, decoupled: 'false'}", "bool()"),
    "not-a-mapping": ("triton_config: [1, 2]", "as a mapping"),
    "no-decoupled": ("triton_config: {max_batch_size: 0}", "no decoupled"),
    "cancellation-zero": (
        "triton_config: {max_batch_size: 0, decoupled: true, cancellation_check_period_ms: 0}",
        "cancellation_check_period_ms",
    ),
}


@pytest.mark.parametrize("name", sorted(TRITON_CONFIGS))
def test_a_mistyped_triton_config_is_refused(name: str, tmp_path: Path) -> None:
    replacement, fragment = TRITON_CONFIGS[name]
    assert SHIPPED in c.LLM_API_YAML
    repo = c.llm_api_repo(tmp_path, c.LLM_API_YAML.replace(SHIPPED, replacement + "\n"))
    result = runner.invoke(app, ["validate", str(repo), "--json"])
    assert result.exit_code != 0, result.output
    findings = [f for f in json.loads(result.stdout) if f["code"] == "TDK605"]
    assert findings and any(fragment in f["message"] for f in findings), findings
    assert all(f["severity"] == "error" for f in findings)


def test_the_shipped_triton_config_passes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(c.llm_api_repo(tmp_path)), "--json"])
    assert "TDK605" not in {f["code"] for f in json.loads(result.stdout)}, result.output


def _decoupled_model(tmp_path: Path, sample_repo: Path) -> Path:
    """A model with no mme/ archive: its repository/ files are published from the digests
    the cache gives (nothing re-hashes them while archiving)."""
    model = Path(shutil.copytree(sample_repo / "tokenizer", tmp_path / "repo" / "tokenizer"))
    with (model / "config.pbtxt").open("a") as config:
        config.write("\nmodel_transaction_policy { decoupled: true }\n")
    return model


def _edit_cache(cache: Path, under: Path, value: object) -> int:
    payload = json.loads(cache.read_text())
    edited = 0
    for path, entry in payload["files"].items():
        if path.startswith(str(under)):
            entry[1] = value
            edited += 1
    cache.write_text(json.dumps(payload))
    return edited


@pytest.mark.parametrize(
    "value", ["1" * 64, "0" * 63 + "z", 5], ids=["other-sha", "not-hex", "int"]
)
@pytest.mark.parametrize("shape", ["decoupled", "archived"])
def test_an_edited_digest_cache_entry_is_dropped_and_recomputed(
    value: object, shape: str, tmp_path: Path, sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    if shape == "decoupled":
        model = _decoupled_model(tmp_path, sample_repo)
    else:
        model = Path(shutil.copytree(sample_repo / "tokenizer", tmp_path / "repo" / "tokenizer"))
    first = runner.invoke(app, ["package", str(model), "--release", str(tmp_path / "r1")])
    assert first.exit_code == 0, first.output
    cache = tmp_path / "cache" / CACHE_FILE
    assert _edit_cache(cache, model, value) > 0
    for dest in ("r2", "r2", "r1"):  # a new release, its republish, the first one again
        again = runner.invoke(app, ["package", str(model), "--release", str(tmp_path / dest)])
        assert again.exit_code == 0, again.output
    stored = json.loads(cache.read_text())["files"]
    source = model / "1" / "model.py"

    truth = hashlib.sha256(source.read_bytes()).hexdigest()
    assert stored[str(source.resolve())][1] == truth  # corrected in the cache
    manifest = json.loads((tmp_path / "r2" / "manifest.json").read_text())
    assert manifest["models"][0]["files"]["tokenizer-0/1/model.py"] == truth


def test_two_publishes_at_once_leave_a_whole_digest_cache(
    tmp_path: Path, sample_repo: Path
) -> None:
    env = {**os.environ, "TDK_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "cli", "package", str(sample_repo)]
    jobs = [
        subprocess.Popen([*command, "--release", str(tmp_path / f"r{i}"), "--copies", "2"], env=env)
        for i in range(2)
    ]
    assert [job.wait(timeout=300) for job in jobs] == [0, 0]
    payload = json.loads((tmp_path / "cache" / CACHE_FILE).read_text())
    assert payload["format_version"] == 1 and payload["files"]
    assert not list((tmp_path / "cache").glob(".tdk-cache-*"))  # no private file left
