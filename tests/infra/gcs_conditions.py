"""A small evaluator of the IAM condition expressions the gke target writes on Cloud Storage
bindings, so tests ask what a condition allows rather than how it is spelled.

The subset the kit writes (CEL: cloud.google.com/iam/docs/conditions-overview and
conditions-resource-attributes, read 2026-12-07): ``resource.name.startsWith("...")`` and
``resource.name == "..."`` joined by ``||``; a Cloud Storage object's ``resource.name`` is
``projects/_/buckets/BUCKET/objects/OBJECT``, the bucket's ``projects/_/buckets/BUCKET``.
Anything else is refused, so a condition the kit starts writing differently fails loudly.
"""

from __future__ import annotations

import re

_TERM = re.compile(r'^resource\.name(?:\.startsWith\("([^"]*)"\)| == "([^"]*)")$')


def condition_allows(expression: str, resource: str) -> bool:
    """Whether ``expression`` holds for a request on ``resource`` (a resource name)."""
    held = False
    for term in expression.split("||"):
        match = _TERM.match(term.strip())
        if match is None:
            raise ValueError(f"not in the evaluated subset: {term.strip()!r}")
        prefix, exact = match.groups()
        held |= resource.startswith(prefix) if prefix is not None else resource == exact
    return held
