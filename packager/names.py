"""Model-name rules shared by SageMaker TargetModels and Triton model directories."""

from __future__ import annotations

import re

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
# A TargetModel is "<name>.tar.gz" and lands as a directory name on the instance: keep the
# archive name within one path component (255 bytes) so every filesystem accepts it.
MAX_NAME_LENGTH = 255 - len(".tar.gz")


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid model / TargetModel name, or None when it is."""
    if not name:
        return "is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long (at most {MAX_NAME_LENGTH})"
    if name in (".", ".."):
        return "is a path component, not a name"
    if not NAME_PATTERN.fullmatch(name):  # match() lets "name\n" through (`$`)
        bad = sorted({ch for ch in name if not re.match(r"[A-Za-z0-9._-]", ch)})
        if bad:
            return f"contains {''.join(bad)!r}; only letters, digits, '.', '_' and '-' are allowed"
        return "must start with a letter, a digit or '_'"
    return None
