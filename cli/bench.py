"""``tdk bench`` (placeholder while it is written)."""

from __future__ import annotations


def bench() -> None:
    """Load-test a target."""
