"""Options of invoke and bench added by the operations-safety work (moved to cli/common.py at
merge)."""

from __future__ import annotations

from typing import Annotated

import typer

from infra.clients.deadline import DEFAULT_TIMEOUT_S

TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="Seconds one request may take in total: connect, headers and the whole body.",
    ),
]
DEFAULT_TIMEOUT = DEFAULT_TIMEOUT_S
