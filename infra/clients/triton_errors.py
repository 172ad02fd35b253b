"""Triton's error text: the one parser for ``{"error": "..."}`` bodies (HTTP API and front)."""

from __future__ import annotations

import json


def triton_error_text(body: bytes, limit: int = 2000) -> str:
    """The ``error`` field of a Triton error body, else the body's text (first ``limit`` chars)."""
    try:
        return str(json.loads(body)["error"])[:limit]
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")[:limit]
