"""``tdk metrics``: placeholder until the CloudWatch reader lands."""

from __future__ import annotations


def metrics() -> None:
    """Show an endpoint's figures."""
