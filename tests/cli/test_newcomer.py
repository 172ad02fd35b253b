"""A newcomer's first hour (issue 21): help in the user's words, completion, output that fits
80 columns and carries no escapes under NO_COLOR or off a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer import _click as click
from typer.testing import CliRunner

from cli.main import app

PYTHON_TYPES = ("<bool>", "<str>", "<int", "<float", "<list[", "<Path>", "<path>")


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_help_shows_user_words_not_python_types() -> None:
    runner = CliRunner(env={"COLUMNS": "120"})
    paths = list(_commands(typer.main.get_command(app)))
    assert ("package",) in paths and ("local", "up") in paths
    for path in paths:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        shown = [t for t in PYTHON_TYPES if t in result.output]
        assert not shown, f"tdk {' '.join(path)} --help shows {shown}"
    package = runner.invoke(app, ["package", "--help"]).output
    assert "INTEGER" in package and "TEXT" in package and "PATH" in package
    completion = runner.invoke(app, ["completion", "--help"]).output
    assert "[bash | zsh | fish | powershell]" in completion


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o default -F _tdk_completion tdk"),
        ("zsh", "#compdef tdk"),
        ("fish", "complete --command tdk"),
    ],
)
def test_completion_prints_a_script(shell: str, marker: str) -> None:
    result = CliRunner().invoke(app, ["completion", shell])
    assert result.exit_code == 0, result.output
    assert marker in result.output and "_TDK_COMPLETE" in result.output


def test_completion_completes_commands_and_options() -> None:
    env = {
        **os.environ,
        "_TDK_COMPLETE": "complete_bash",
        "COMP_WORDS": "tdk pac",
        "COMP_CWORD": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "cli"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["package"], done.stderr


def test_package_table_keeps_target_models_whole_at_80_columns(
    sample_repo: Path, tmp_path: Path
) -> None:
    runner = CliRunner(env={"COLUMNS": "80"})
    dest = f"file://{tmp_path / 'a-release-directory-with-a-long-name' / 'r1'}"
    result = runner.invoke(app, ["package", str(sample_repo), "--copies", "12", "--release", dest])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 80, result.stdout
    for name in ("image_classifier-11.tar.gz", "text_classifier-10.tar.gz", "image_classifier-11"):
        assert any(f" {name} " in line for line in lines), (name, result.stdout)
    assert f"release {dest}" in lines  # the release URL is a line of its own, whole
    assert "…" not in result.stdout


def _on_terminal(
    args: list[str], env: dict[str, str], cwd: Path, program: tuple[str, ...] = ("-m", "cli")
) -> tuple[int, str]:
    """Run ``tdk ARGS`` with stdout and stderr on a pseudo-terminal; (exit code, output)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, *program, *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=cwd,
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], deadline - time.monotonic())
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture
def terminal_env(tmp_path: Path) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": root, "COLUMNS": "80", "TERM": "xterm-256color"}


def test_no_color_validate_has_no_escapes_and_whole_paths(
    repo: Path, tmp_path: Path, terminal_env: dict[str, str]
) -> None:
    deep = tmp_path / "a-rather-long-directory-name-for-models" / "and-another-level-below-it"
    deep.mkdir(parents=True)
    (repo / "image_classifier").rename(deep / "image_classifier")
    (deep / "image_classifier" / "config.pbtxt").write_text("max_batch_size: -3\n")
    missing = tmp_path / "a-directory-that-does-not-exist-with-a-long-name" / "models"
    env = {**terminal_env, "NO_COLOR": "1"}
    for target, expect in ((deep, 1), (missing, 2)):
        code, output = _on_terminal(["validate", str(target)], env, tmp_path)
        assert code == expect, output
        assert "\x1b[" not in output, output
        assert str(target) in output, output  # whole, never wrapped or cut


def test_no_color_help_and_usage_errors_have_no_escapes(
    tmp_path: Path, terminal_env: dict[str, str]
) -> None:
    env = {**terminal_env, "NO_COLOR": "1"}
    for args, expect in ((["package", "--help"], 0), (["package", "x"], 2)):
        code, output = _on_terminal(args, env, tmp_path)
        assert code == expect, output
        assert "\x1b[" not in output and "--release" in output, output


def test_errors_are_coloured_only_on_a_terminal_without_no_color(
    tmp_path: Path, terminal_env: dict[str, str]
) -> None:
    missing = str(tmp_path / "nope")
    code, output = _on_terminal(["validate", missing], terminal_env, tmp_path)
    assert code == 2 and "\x1b[" in output  # a terminal: red
    piped = CliRunner().invoke(app, ["validate", missing])
    assert piped.exit_code == 2 and "\x1b[" not in piped.output and "error:" in piped.output


def test_lists_in_messages_are_text(repo: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    fmt = runner.invoke(app, ["validate", str(repo), "--format", "xml"])
    assert fmt.exit_code == 2 and "human, json, sarif, github" in fmt.output, fmt.output
    dest = f"file://{tmp_path / 'r'}"
    args = ["package", str(repo), "--name-template", "{model}-{i}-{zone}", "--release", dest]
    template = runner.invoke(app, args)
    assert template.exit_code == 2 and "unknown field(s) zone" in template.output
    assert "['" not in fmt.output + template.output


def test_working_set_counts_composing_models_and_says_what_does_not_fit(repo: Path) -> None:
    runner = CliRunner()
    args = ["validate", str(repo), "--target", "gke", "--gpu", "nvidia-l4"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = {line.split(": ")[1].split(" (")[0]: line for line in result.stderr.splitlines()}
    assert "0 copies" not in result.stderr and "fits 0" not in result.stderr
    pipeline = lines["text_pipeline"]
    assert "with text_classifier, tokenizer" in pipeline, pipeline
    own = sum(p.stat().st_size for p in (repo / "text_pipeline").rglob("*") if p.is_file())
    together = sum(
        p.stat().st_size
        for m in ("text_pipeline", "text_classifier", "tokenizer")
        for p in (repo / m).rglob("*")
        if p.is_file()
    )
    assert f"({together / 1e6:.1f} MB" in pipeline and together > 2 * own
    with (repo / "tokenizer" / "1" / "weights.bin").open("wb") as sparse:
        sparse.truncate(30 * 2**30)  # 30 GiB apparent size, no disk used; the L4 has 24 GiB
    too_big = runner.invoke(app, args)
    assert too_big.exit_code == 1, too_big.output
    assert "tokenizer (" in too_big.stderr and "does not fit in GPU memory" in too_big.stderr
    assert "text_pipeline (" in too_big.stderr  # it carries the tokenizer, so it does not fit
    assert too_big.stderr.count("does not fit in GPU memory") == 2, too_big.stderr


class _Instant:
    """A target that answers at once: the load generator's own pace is what is measured."""

    def send(self, model: object, request: object) -> bytes:
        return b"ok"

    def decode(self, model: object, body: bytes) -> dict[str, object]:
        return {"out": body}

    def close(self) -> None:
        pass


def test_bench_reports_progress_after_the_cold_request_and_each_level(
    sample_repo: Path, tmp_path: Path
) -> None:
    import json

    from infra.clients.base import PreparedRequest
    from infra.perf.bench.measure import Load, RunsOn, run_bench
    from packager.manifest import Manifest

    dest = tmp_path / "r"
    packaged = CliRunner().invoke(app, ["package", str(sample_repo), "--release", f"file://{dest}"])
    assert packaged.exit_code == 0, packaged.output
    model = Manifest.from_json((dest / "manifest.json").read_bytes(), "manifest.json").models[0]
    steps: list[int] = []
    record = run_bench(
        _Instant,  # type: ignore[arg-type,return-value]
        model,
        PreparedRequest(b"{}", None),
        Load(concurrency=(1, 2, 3), duration_s=0.05),
        RunsOn("local"),
        progress=steps.append,
    )
    assert steps == [1, 1, 1, 1]  # cold request, then three levels
    assert [level["level"] for level in record["levels"]] == [1, 2, 3]
    assert json.dumps(record)


def test_progress_shows_on_a_terminal_only_for_long_work(
    tmp_path: Path, terminal_env: dict[str, str]
) -> None:
    probe = (str(Path(__file__).with_name("progress_probe.py")),)
    long_code, long_run = _on_terminal(["0", "1.5"], terminal_env, tmp_path, probe)
    assert long_code == 0 and "uploading-archives" in long_run, long_run
    short_code, short_run = _on_terminal(["60", "0.2"], terminal_env, tmp_path, probe)
    assert short_code == 0 and "done" in short_run and "uploading-archives" not in short_run
    json_code, json_run = _on_terminal(["0", "1.5", "--json"], terminal_env, tmp_path, probe)
    assert json_code == 0 and "uploading-archives" not in json_run, json_run
