"""The user's price table (``tdk plan --prices FILE``), in the layout of the tables each target's
catalog commits (``infra.planning.pricing``: nothing here names a cloud or a section)."""

from __future__ import annotations

from pathlib import Path

from infra.planning.pricing import PriceTable, load_table


def load_prices(path: Path) -> PriceTable:
    """The table in ``path`` (``--prices``)."""
    return load_table(path, "check --prices (a JSON price table)")
