"""The pieces every hand-written CRD schema in the tests is built from (KEDA and Managed
Prometheus in ``test_k8s_custom_resources.py``, prometheus-operator's in the manifest test of
the target that renders them): an object that refuses unknown fields, as the API server's
structural schema pruning would silently drop them, a non-empty array, a map of strings, and a
scrape interval."""

from __future__ import annotations

from typing import Any

#: labels, annotations, KEDA trigger metadata: string values only
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
#: a scrape interval as the kit writes it (one unit), stricter than the CRDs' Prometheus duration
INTERVAL = {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"}


def strict_object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON schema object with exactly ``properties``, of which ``required`` must be set."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def non_empty_array(items: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema array of at least one ``items``."""
    return {"type": "array", "minItems": 1, "items": items}
