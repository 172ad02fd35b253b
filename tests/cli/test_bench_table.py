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
