"""Lists in messages as people write them (``a, b, c``), never as Python reprs."""

from __future__ import annotations

from collections.abc import Iterable


def as_text(items: Iterable[object]) -> str:
    """``["json", "sarif"]`` -> ``json, sarif``."""
    return ", ".join(str(item) for item in items)
