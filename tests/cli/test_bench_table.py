"""``tdk bench``'s table when its probe requests failed: it says so rather than "None ms"."""

from __future__ import annotations

import io

from rich.console import Console

from cli.bench import _table
from cli.output import Output


def test_failed_probes_read_as_failed_not_none() -> None:
    screen = io.StringIO()
    console = Console(file=screen, width=100, color_system=None)
    out = Output(console=console, err=console)
    record = {
        "target_model": "m-0", "cold_ms": None, "first_warm_ms": None,
        "probe_errors": {"http_500": 2}, "levels": [], "instance_type": None, "gpu": None,
        "target": "local", "body_bytes": 10, "client_bound": False,
    }  # fmt: skip
    _table(out, record)
    text = screen.getvalue()
    assert "m-0: cold failed, first warm failed" in text and "None" not in text
    assert "probe requests failed: {'http_500': 2}" in text


def _record(ok: int, errors: dict[str, int], probes: dict[str, int]) -> dict[str, object]:
    failed_probes = sum(probes.values())
    return {
        "probe_errors": probes, "cold_ms": None if failed_probes else 3.0,
        "first_warm_ms": None if failed_probes > 1 else 1.0,
        "levels": [{"ok": ok, "errors": errors}],
    }  # fmt: skip


def test_bench_says_how_many_requests_failed() -> None:
    import pytest

    from cli.bench import _check_failures
    from tdk.errors import TdkError

    screen = io.StringIO()
    console = Console(file=screen, width=200, color_system=None)
    out = Output(console=console, err=console)
    _check_failures(out, _record(10, {}, {}))
    assert screen.getvalue() == ""
    _check_failures(out, _record(8, {"ModelError": 2}, {}))
    assert "2 of 12 requests failed (ModelError: 2)" in screen.getvalue()
    with pytest.raises(TdkError, match=r"every request failed \(500 of 500: ModelError: 500\)"):
        _check_failures(out, _record(0, {"ModelError": 498}, {"ModelError": 2}))


def test_a_level_with_no_success_is_a_failure_not_stable() -> None:
    """Issue 49 item 2: a level of 0 successes read 'stable: 3 windows, spread 0 %'."""
    import pytest

    from cli.bench import _check_failures
    from tdk.errors import TdkError

    screen = io.StringIO()
    console = Console(file=screen, width=200, color_system=None)
    out = Output(console=console, err=console)
    levels = [
        {"mode": "concurrency", "level": 1, "ok": 40, "errors": {}},
        {"mode": "concurrency", "level": 2, "ok": 0, "errors": {"500": 9}, "spread": None,
         "windows": 1, "stable": False, "throughput_rps": 0.0, "p50_ms": 0.0, "p90_ms": 0.0,
         "p99_ms": 0.0, "client_bound": False},
    ]  # fmt: skip
    levels[0].update(levels[1] | {"ok": 40, "errors": {}, "level": 1, "stable": True,
                                  "spread": 0.01, "windows": 3})  # fmt: skip
    record = {"target_model": "m-0", "cold_ms": 3.0, "first_warm_ms": 1.0, "probe_errors": {},
              "levels": levels, "instance_type": None, "gpu": None, "target": "local",
              "body_bytes": 10, "client_bound": False}  # fmt: skip
    _table(out, record)
    assert "failed: no request succeeded" in screen.getvalue()
    with pytest.raises(TdkError, match="no request succeeded at concurrency 2"):
        _check_failures(out, record)
