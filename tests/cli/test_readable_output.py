"""Output a person reads (issue 40, rows 6 and 9): errors and warnings wrap at the terminal's
width, a warning is said once per command, no column is empty on every row, no field is
nameless, stability is said in plain words, and `tdk bench` interrupted reports the levels it
finished (exit 130, as `tdk tune`)."""

from __future__ import annotations

import io
import itertools
from collections import Counter
from typing import Any

import pytest
import typer
from rich.console import Console

from cli.bench import report
from cli.output import Output, stability
from infra.perf.bench import loadgen
from infra.perf.bench import measure as perf_bench


def _out(width: int = 80, terminal: bool = False) -> tuple[Output, io.StringIO]:
    screen = io.StringIO()
    console = Console(file=screen, width=width, color_system=None, force_terminal=terminal)
    return Output(console=console, err=console), screen


def test_errors_and_warnings_wrap_at_the_terminal_width() -> None:
    out, screen = _out(80, terminal=True)
    long = "the stack file still holds placeholder values " * 10
    path = "/a/path/" + "long-directory-name/" * 6
    out.error(long + path, hint="set your own values with pulumi config set " * 5)
    out.warn(long)
    lines = screen.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines if path not in line), lines
    assert len(lines) > 6 and any(path in line for line in lines)  # a path is never split
    hint = [line for line in lines if "hint:" in line]
    assert hint and hint[0].startswith("  hint:") and all(line == line.rstrip() for line in lines)


def test_piped_errors_keep_their_lines_whole() -> None:
    out, screen = _out(80)
    long = "x " * 100
    out.error(long)
    assert f"error: {long}" in screen.getvalue()


def test_a_warning_is_said_once_per_command() -> None:
    out, screen = _out()
    for _ in range(3):
        out.warn("Pulumi.gke-dev.yaml still holds placeholder values")
    assert screen.getvalue().count("placeholder values") == 1


def test_stability_in_plain_words() -> None:
    assert stability(0.84, 10, False) == "unstable: 10 windows, spread 84 %"
    assert stability(0.04, 3, True) == "stable: 3 windows, spread 4 %"
    assert stability(None, 1, False) == "unstable: 1 windows, spread unknown"


def _level(level: int, bound: bool = False) -> dict[str, Any]:
    return {
        "mode": "closed", "level": level, "throughput_rps": 10.0, "spread": 0.05, "windows": 3,
        "stable": True, "p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": 3.0, "ok": 30, "errors": {},
        "client_bound": bound,
    }  # fmt: skip


def _record(levels: list[dict[str, Any]], interrupted: int | None = None) -> dict[str, Any]:
    return {
        "target_model": "m-0", "cold_ms": 1.0, "first_warm_ms": 1.0, "probe_errors": {},
        "levels": levels, "instance_type": None, "gpu": None, "target": "local",
        "body_bytes": 10, "client_bound": any(lv["client_bound"] for lv in levels),
        "interrupted": interrupted,
    }  # fmt: skip


def test_bench_has_no_client_column_unless_a_level_was_bound() -> None:
    out, screen = _out(140)
    report(out, _record([_level(1), _level(2)]), json=False)
    text = screen.getvalue()
    assert "client" not in text and "stable: 3 windows, spread 5 %" in text
    out, screen = _out(140)
    report(out, _record([_level(1), _level(2, bound=True)]), json=False)
    assert "client" in screen.getvalue() and "bound" in screen.getvalue()


def test_an_interrupted_bench_reports_the_levels_it_finished() -> None:
    out, screen = _out(140)
    with pytest.raises(typer.Exit) as stopped:
        report(out, _record([_level(1), _level(2)], interrupted=2), json=False)
    assert stopped.value.exit_code == 130
    text = screen.getvalue()
    assert "interrupted: reporting the 2 level(s) finished" in text
    assert text.count("closed") == 2


def test_run_bench_keeps_the_levels_finished_before_ctrl_c(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C during the third level: the first two come back, marked interrupted."""
    calls = itertools.count()

    def level(window: Any, load: Any) -> dict[str, Any]:
        n = next(calls)
        if n == 2:
            raise KeyboardInterrupt
        return _level(n + 1)

    monkeypatch.setattr(perf_bench, "_level", level)
    monkeypatch.setattr(loadgen, "cold_then_warm", lambda send: (1.0, 1.0, Counter()))
    load = perf_bench.Load((1, 2, 4, 8), None, False, 0.1, loadgen.Stability(5.0, 3))
    record = perf_bench.run_bench(
        _NoClient, _Model(), _Request(), load, perf_bench.RunsOn("local", None, None)
    )
    assert [lv["level"] for lv in record["levels"]] == [1, 2]
    assert record["interrupted"] == 2  # SIGINT


class _NoClient:
    def close(self) -> None:
        pass


class _Model:
    target_model = "m-0.tar.gz"
    name = "m-0"


class _Request:
    body = b"x"


def test_tune_names_every_field_even_when_printed_vertically() -> None:
    """At a narrow width the table prints `column: value` lines: none may be nameless."""
    from types import SimpleNamespace

    from cli.tune import _show
    from infra.perf.tune.search import Point

    knobs = SimpleNamespace(label=lambda: "instances=2")
    point = Point(knobs, 4, 100.0, 1.0, 1.5, 2.0, 0, windows=10, spread=0.84, stable=False)  # type: ignore[arg-type]
    report = SimpleNamespace(
        to_dict=dict, search=SimpleNamespace(interrupted=False), front=[point], choice=point,
        model="m", measurements=1, settings=SimpleNamespace(budget_ms=50.0), shipped_best=None,
        skipped=[], notes=[], improves=True, shipped_points=[],
    )  # fmt: skip
    out, screen = _out(30)
    _show(out, report, False, None, None)  # type: ignore[arg-type]
    lines = screen.getvalue().splitlines()
    assert not [line for line in lines if line.strip().startswith(":")], lines
    assert "  choice: chosen" in lines and "  client: bound" not in lines
    assert "  stability: unstable: 10 windows, spread 84 %" in lines


def test_doctor_leads_with_what_this_machine_and_the_stacks_lack() -> None:
    """The machine's checks and the placeholders come before the fact tables."""
    from pathlib import Path

    from typer.testing import CliRunner

    from cli.main import app

    root = Path(__file__).resolve().parents[2]
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(root)], env={"TDK_TODAY": "2026-11-24"}
    )
    text = result.stdout
    machine = text.index("this machine (")
    assert machine < text.index("placeholders to replace") < text.index("feasibility as of")
    assert text.index("feasibility as of") < text.index("every stack (")  # the facts
