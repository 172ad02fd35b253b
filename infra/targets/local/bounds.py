"""What the front checks in a request's JSON before Triton parses it (issue 47 item 2).

Triton 2.51's HTTP frontend parses a request's JSON recursively: one body of 300,000 nested
``[`` sent through the front crashed it (a restart, every in-flight request 503; reproduced
2026-12-07 with the runtime wheel). So a body Triton would read as JSON (an invocation, a
generate request, ``/tdk/switch``) is refused with 400 when it nests deeper than
``MAX_DEPTH`` or holds more than ``MAX_VALUES`` values; its size is bounded before it is read
(``--max-body``). The check scans the bytes without building anything (``tdk.bounded``), in
time linear in the body's length.
"""

from __future__ import annotations

from infra.targets.local.errors import validation
from tdk.bounded import MAX_DEPTH, json_structure, nests_deeper, structure_values

#: the nesting a request may have: an inference request is 3 levels plus one per dimension of
#: a nested ``data`` array (the kit's other readers take the same 64)
REQUEST_DEPTH = MAX_DEPTH
#: values a request's JSON may hold: more than a 6 MB body (InvokeEndpoint's limit) can carry
#: (3 million one-digit numbers), so only a --max-body beyond that meets it
MAX_VALUES = 4 * 1024 * 1024


def check_json(body: bytes, what: str = "request body") -> None:
    """400 (ValidationError) unless ``body``'s JSON nests at most ``REQUEST_DEPTH`` deep and
    holds at most ``MAX_VALUES`` values; whether it is valid JSON is left to Triton."""
    structure = json_structure(body)
    if nests_deeper(structure, REQUEST_DEPTH):
        raise validation(f"the {what}'s JSON nests more than {REQUEST_DEPTH} levels deep")
    values = structure_values(structure)
    if values > MAX_VALUES:
        raise validation(f"the {what}'s JSON holds {values} values, more than {MAX_VALUES}")
