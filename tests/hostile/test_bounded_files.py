"""Issue 36 item 5: every JSON and YAML file tdk reads goes through one bounded reader
(``tdk.bounded``). A file nested 200,000 deep, an alias bomb, a lone surrogate, a FIFO or a
device is refused with a message naming the file: never a RecursionError, a UnicodeEncodeError,
a MemoryError, nor a hang. One row per (reader, hostile file)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.aws.machine import credentials as aws_credentials
from infra.facts.machine import pulumi_backend
from tests.conftest import load_generator
from tests.hostile.test_bounded_inputs import _alias_bomb
from tests.validate.llm import corpus as c

runner = CliRunner(env={"COLUMNS": "300"})
ROOT = Path(__file__).resolve().parents[2]
DEEP = "[" * 200_000 + "]" * 200_000

FRAGMENTS = {
    "deep": "nested more than",
    "surrogate": "lone surrogate",
    "fifo": "FIFO",
    "dev-zero": "character device",
    "alias-bomb": "aliases expand to more than",
}


def _plant(path: Path, kind: str, yaml: bool = False) -> None:
    """Replace ``path`` with the hostile ``kind`` of file."""
    if path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "deep":
        path.write_text(("a: " if yaml else "") + DEEP)
    elif kind == "surrogate":
        path.write_text('"\\ud800": 1\n' if yaml else '{"\\ud800": 1}')
    else:
        path.write_text(_alias_bomb(8))


@dataclass(frozen=True)
class Reader:
    """How to make a command read the hostile file: (arguments, the file) from a folder."""

    setup: Callable[[Path], tuple[list[str], Path]]
    kinds: tuple[str, ...]
    yaml: bool = False


def _model_json(root: Path) -> tuple[list[str], Path]:
    repo = c.vllm_repo(root / "repo")
    return ["validate", str(repo)], repo / "vllm_model" / "1" / "model.json"


def _multi_lora(root: Path) -> tuple[list[str], Path]:
    repo = c.vllm_repo(root / "repo", args={**c.VLLM_ARGS, "enable_lora": True})
    return ["validate", str(repo)], repo / "vllm_model" / "1" / "multi_lora.json"


def _engine_config(root: Path) -> tuple[list[str], Path]:
    repo = c.trtllm_repo(root / "repo")
    return ["validate", str(repo)], repo / "tensorrt_llm" / "1" / "config.json"


def _model_yaml(root: Path) -> tuple[list[str], Path]:
    repo = c.llm_api_repo(root / "repo")
    return ["validate", str(repo)], repo / "tensorrt_llm" / "1" / "model.yaml"


def _stack_file(root: Path) -> tuple[list[str], Path]:
    (root / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    args = ["render", "k8s", "--stack", "gke-dev", "--out", "-", "--project-dir", str(root)]
    return args, root / "Pulumi.gke-dev.yaml"


def _bench_json(root: Path) -> tuple[list[str], Path]:
    return ["plan", str(root / "bench.json"), "--slo-ms", "10"], root / "bench.json"


def _manifest(root: Path) -> tuple[list[str], Path]:
    (root / "store").mkdir()
    return ["local", "check", "--release", str(root / "store")], root / "store" / "manifest.json"


def _ledger(root: Path) -> tuple[list[str], Path]:
    dest = root / "dest"
    load_generator().generate(root / "samples")  # a clean clone has no model_repos/samples
    args = ["package", str(root / "samples" / "tokenizer"), "--release", str(dest)]
    return [*args, "--prune"], dest / "tdk-ledger.json"


def _render_ledger(root: Path) -> tuple[list[str], Path]:
    out = root / "out"
    args = ["render", "k8s", "--stack", "gke-dev", "--out", str(out), "--project-dir", str(ROOT)]
    return args, out / ".tdk-render-gke-dev.ledger"


def _prompts(root: Path) -> tuple[list[str], Path]:
    return [
        "bench",
        "generate",
        "--target-model",
        "m",
        "--prompts",
        str(root / "p.txt"),
    ], root / "p.txt"


ALL = ("deep", "surrogate", "fifo", "dev-zero")
LINK = "a symbolic link, not a file"  # a release's own files are never read through a link
READERS = {
    "model.json": Reader(_model_json, ALL),
    "multi_lora.json": Reader(_multi_lora, ALL),
    # tdk reads an engine's config.json and an LLM-API model.yaml only where they are files
    "engine-config.json": Reader(_engine_config, ("deep", "surrogate")),
    "model.yaml": Reader(_model_yaml, ("deep", "surrogate", "alias-bomb"), yaml=True),
    "stack-file": Reader(_stack_file, (*ALL, "alias-bomb"), yaml=True),
    "bench-json-for-plan": Reader(_bench_json, ALL),
    "manifest": Reader(_manifest, ALL),
    "ledger": Reader(_ledger, ALL),
    "prompts": Reader(_prompts, ("fifo", "dev-zero")),
    # render reads its ledger only where it is a file (else: none yet, and it writes one)
    "render-ledger": Reader(_render_ledger, ("deep", "surrogate")),
}
ROWS = [(name, kind) for name, reader in READERS.items() for kind in reader.kinds]


def _invoke_guarded(args: list[str], fifo: Path | None) -> Any:
    """``runner.invoke`` in a thread: a reader blocked on a FIFO fails the test (the FIFO is
    then opened for writing, so the blocked open returns) instead of hanging the suite."""
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(runner.invoke(app, args)), daemon=True)
    worker.start()
    worker.join(timeout=120)
    if worker.is_alive() and fifo is not None:
        with open(fifo, "wb"):  # unblocks the reader's open; it then reads end-of-file
            pass
        worker.join(timeout=60)
        pytest.fail(f"{args[0]} blocked reading the FIFO {fifo}")
    assert done, f"{args[0]} did not finish"
    return done[0]


@pytest.mark.parametrize(("reader", "kind"), ROWS, ids=[f"{r}-{k}" for r, k in ROWS])
def test_a_hostile_file_is_refused_naming_it(
    reader: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TDK_CACHE_DIR", str(tmp_path / "cache"))
    entry = READERS[reader]
    args, path = entry.setup(tmp_path)
    _plant(path, kind, entry.yaml)
    result = _invoke_guarded(args, path if kind == "fifo" else None)
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    flat = " ".join(result.output.replace("│", " ").split())
    fragment = LINK if (reader, kind) == ("ledger", "dev-zero") else FRAGMENTS[kind]
    if reader == "manifest" and kind in ("fifo", "dev-zero"):
        fragment = "not a regular file"  # the local endpoint refuses it before its reader
    assert fragment in flat, result.output
    assert path.name in flat, result.output


CREDENTIALS = {
    "a-list": ("[]", "holds a JSON array"),
    "a-string": ('"x"', "holds a JSON string"),
    "current-a-number": ('{"current": 5}', "its current is 5"),
    "deep": (DEEP, "nested more than"),
    "surrogate": ('{"current": "\\ud800"}', "lone surrogate"),
}


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
def test_a_hostile_pulumi_credentials_file_is_a_finding(name: str, tmp_path: Path) -> None:
    content, fragment = CREDENTIALS[name]
    (tmp_path / ".pulumi").mkdir()
    (tmp_path / ".pulumi" / "credentials.json").write_text(content)
    check = pulumi_backend({"HOME": str(tmp_path)})
    assert check.status == "missing" and fragment in check.value, check
    assert "credentials.json" in check.value and "pulumi login" in check.fix


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_aws_credentials_that_are_no_file_are_not_read(kind: str, tmp_path: Path) -> None:
    """``AWS_SHARED_CREDENTIALS_FILE=/dev/zero`` was a MemoryError; a FIFO would block."""
    path = tmp_path / "credentials"
    _plant(path, kind)
    env = {"HOME": str(tmp_path), "AWS_SHARED_CREDENTIALS_FILE": str(path)}
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(aws_credentials(env)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():
        with open(path, "wb"):
            pass
        pytest.fail("the AWS credentials check blocked on a FIFO")
    assert done[0].status == "missing", done[0]


def test_a_json_file_is_still_read(tmp_path: Path) -> None:
    """The reader refuses only what it must: a plain bench JSON still plans."""
    bench = {
        "target": "sagemaker", "instance_type": "ml.g4dn.xlarge", "gpu": None,
        "target_model": "m-0.tar.gz",
        "levels": [{"mode": "concurrency", "level": 1, "throughput_rps": 100, "p50_ms": 1,
                    "p90_ms": 2, "p99_ms": 3, "errors": {}}],
    }  # fmt: skip
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    args = ["plan", str(tmp_path / "bench.json"), "--slo-ms", "10", "--peak-rps", "50"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("kind", ["deep", "surrogate", "fifo", "dev-zero", "alias-bomb"])
def test_plan_write_stack_reads_the_stack_file_bounded(kind: str, tmp_path: Path) -> None:
    """``tdk plan --write-stack`` round-trips the stack file with ruamel: the bounded reader
    checks it first (a FIFO blocked, /dev/zero exhausted memory)."""
    from infra.perf.plan.stackfile import load_stack
    from tdk.errors import ConfigError

    path = tmp_path / "Pulumi.x.yaml"
    _plant(path, kind, yaml=True)
    failed: list[BaseException] = []

    def load() -> None:
        try:
            load_stack(path)
        except BaseException as exc:
            failed.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():
        with open(path, "wb"):
            pass
        pytest.fail("load_stack blocked on a FIFO")
    assert failed and isinstance(failed[0], ConfigError), failed
    assert FRAGMENTS[kind] in str(failed[0]) and path.name in str(failed[0])
