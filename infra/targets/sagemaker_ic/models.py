"""Which model copies become inference components: declared groups, or the release manifest.

``sagemakerIcModels`` (a list of groups, each ``{"copies": [...], "sizeMb": N}`` plus optional
``accelerators``, ``memoryMb``, ``cpuCores``, ``minCopies``, ``maxCopies``, ``initialCopies``)
wins; when it is empty every copy of the manifest at ``sagemakerIcManifestUrl`` (or
``releaseUrl``) becomes a component with the stack-wide settings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from infra.config import qualify
from tdk.errors import ConfigError, TdkError

MODELS_KEY = "sagemakerIcModels"
_NUMBERS = {
    "sizeMb": int, "accelerators": int, "memoryMb": int, "cpuCores": float,
    "minCopies": int, "maxCopies": int, "initialCopies": int,
}  # fmt: skip


@dataclass(frozen=True)
class CopyRequest:
    """One model copy to serve, with its size and any per-group overrides (None: stack-wide)."""

    copy: str
    size_bytes: int
    where: str
    overrides: dict[str, float]
    #: packaged without an mme/ archive (decoupled: ``mme_left_out`` says why)
    decoupled: bool = False


def _bad(where: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{where} {problem}",
        hint=f"e.g. `pulumi config set --path {qualify(MODELS_KEY)}[0].copies[0] bert-0` with "
        '"sizeMb" (the archive size, `tdk package` prints it); or [] to read the manifest',
    )


def _group(index: int, group: Any) -> list[CopyRequest]:
    where = f"{qualify(MODELS_KEY)}[{index}]"
    if not isinstance(group, dict):
        raise _bad(where, "must be an object with copies and sizeMb")
    unknown = set(group) - {"copies", *_NUMBERS}
    if unknown:
        raise _bad(where, f"has unknown field(s) {', '.join(sorted(unknown))}")
    copies = group.get("copies")
    if not isinstance(copies, list) or not copies or not all(isinstance(c, str) for c in copies):
        raise _bad(where, "needs copies: a non-empty list of model copy names")
    numbers: dict[str, float] = {}
    for field, kind in _NUMBERS.items():
        value = group.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise _bad(f"{where}.{field}", f"must be a number >= 0, got {value!r}")
        if kind is int and value != int(value):
            raise _bad(f"{where}.{field}", f"must be a whole number, got {value!r}")
        numbers[field] = kind(value)
    if not numbers.get("sizeMb"):
        raise _bad(where, "needs sizeMb > 0 (the model's archive size in MB)")
    size = int(numbers.pop("sizeMb") * 1024 * 1024)
    return [CopyRequest(copy, size, f"{where} ({copy})", numbers) for copy in copies]


def declared_copies(raw: str) -> list[CopyRequest]:
    """The copies ``sagemakerIcModels`` declares (empty: read the manifest instead)."""
    try:
        groups = json.loads(raw) if raw.strip() else []
    except ValueError as exc:
        raise _bad(qualify(MODELS_KEY), f"is not a JSON list ({exc})") from None
    if not isinstance(groups, list):
        raise _bad(qualify(MODELS_KEY), "must be a list of groups")
    found = [request for i, group in enumerate(groups) for request in _group(i, group)]
    names = [r.copy for r in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _bad(qualify(MODELS_KEY), f"lists {', '.join(duplicates)} more than once")
    return found


def manifest_copies(url: str, key: str) -> list[CopyRequest]:
    """Every copy of the release manifest at ``url`` (file://, s3://, gs://)."""
    from packager.manifest import MANIFEST_NAME
    from packager.stores import open_store
    from packager.stores.capped import read_manifest

    try:
        store = open_store(url, None)
        manifest = read_manifest(store)
    except TdkError as exc:
        raise ConfigError(
            f"{qualify(key)}: cannot read the release manifest at {url}: {exc.message}",
            hint="publish the release first (`tdk package --dest URL`), or declare the copies "
            f"in {qualify(MODELS_KEY)}",
        ) from None
    return [
        CopyRequest(m.name, m.size, f"{url}/{MANIFEST_NAME} ({m.name})", {}, not m.archive)
        for m in manifest.models
    ]
