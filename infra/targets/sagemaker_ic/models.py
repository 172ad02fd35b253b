"""Which model copies become inference components: declared groups, or the release manifest.

``sagemakerIcModels`` (a list of groups, each ``{"copies": [...], "sizeMb": N}`` plus optional
``accelerators``, ``memoryMb``, ``cpuCores``, ``minCopies``, ``maxCopies``, ``initialCopies``,
``decoupled``) wins; when it is empty every copy of the manifest at ``releaseUrl`` (the
deprecated ``sagemakerIcManifestUrl`` still names it for a release) becomes a component with
the stack-wide settings.

Components are declared only for copies the named release holds: until the stack names a
published release (its manifest exists), listed copies are checked (capacity, names) but no
Model or component is declared, and the program says what to run next. A decoupled copy (an
LLM: packaged without an ``mme/`` archive) is served in Triton's generate mode from
``repository/``: each listed copy is looked up in the manifest (``with_manifest``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from infra.config import qualify
from tdk.bounded import DocumentError, parse_json
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
    #: where ``decoupled`` comes from: the group's ``decoupled`` field or the manifest (None:
    #: neither; it is assumed False)
    decoupled_from: str | None = None
    #: the LLM engine the manifest says the copy runs ("" for none or unknown)
    engine: str = ""


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
    unknown = set(group) - {"copies", "decoupled", *_NUMBERS}
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
    decoupled = group.get("decoupled")
    if decoupled is not None and not isinstance(decoupled, bool):
        raise _bad(f"{where}.decoupled", f"must be true or false, got {decoupled!r}")
    stated = f"{where}.decoupled" if decoupled is not None else None
    return [
        CopyRequest(copy, size, f"{where} ({copy})", numbers, bool(decoupled), stated)
        for copy in copies
    ]


def declared_copies(raw: str) -> list[CopyRequest]:
    """The copies ``sagemakerIcModels`` declares (empty: read the manifest instead)."""
    try:
        groups = parse_json(raw, qualify(MODELS_KEY), "") if raw.strip() else []
    except DocumentError as exc:
        raise _bad(qualify(MODELS_KEY), f"is not a JSON list ({exc.reason})") from None
    if not isinstance(groups, list):
        raise _bad(qualify(MODELS_KEY), "must be a list of groups")
    found = [request for i, group in enumerate(groups) for request in _group(i, group)]
    names = [r.copy for r in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _bad(qualify(MODELS_KEY), f"lists {', '.join(duplicates)} more than once")
    return found


def published(url: str, key: str) -> bool:
    """Whether the release at ``url`` has its manifest (written last by ``tdk package``: a
    release without one is not published, and its archives may be missing)."""
    from packager.manifest import MANIFEST_NAME
    from packager.stores import open_store

    try:
        store = open_store(url, None)
        return store.exists_at([*store.root_parts, MANIFEST_NAME])
    except TdkError as exc:
        raise ConfigError(
            f"{qualify(key)}: cannot look for the release manifest at {url}: {exc.message}",
            hint="check the URL and the credentials that may read it",
        ) from None


def manifest_copies(url: str, key: str, listed: bool = False) -> list[CopyRequest]:
    """Every copy of the release manifest at ``url`` (file://, s3://, gs://); ``listed``: read
    to check hand-listed copies (the hint then says so)."""
    from packager.manifest import MANIFEST_NAME
    from packager.stores import open_store
    from packager.stores.capped import read_manifest

    try:
        store = open_store(url, None)
        manifest = read_manifest(store)
    except TdkError as exc:
        raise ConfigError(
            f"{qualify(key)}: cannot read the release manifest at {url}: {exc.message}",
            hint=(
                f"{qualify(MODELS_KEY)} lists copies and the stack names this release, so its "
                "manifest says which are decoupled: publish it first (`tdk package --release URL`)"
                if listed
                else "publish the release first (`tdk package --release URL`), or declare the "
                f"copies in {qualify(MODELS_KEY)}"
            ),
        ) from None
    from packager.engines import released_engine

    where = f"{url}/{MANIFEST_NAME}"
    return [
        CopyRequest(m.name, m.size, f"{where} ({m.name})", {}, not m.archive, where,
                    released_engine(m.name, m.backend, m.files))
        for m in manifest.models
    ]  # fmt: skip


def with_manifest(declared: list[CopyRequest], released: list[CopyRequest]) -> list[CopyRequest]:
    """The hand-listed copies, each with ``decoupled`` as the release's manifest records it: a
    copy the release lacks, or a group's ``decoupled`` that the manifest contradicts, is a
    ConfigError (the component would load an archive that is not there, or in the wrong mode)."""
    by_name = {r.copy: r for r in released}
    fitted = []
    for request in declared:
        found = by_name.get(request.copy)
        if found is None:
            shown = ", ".join(sorted(by_name)[:5]) or "none"
            raise ConfigError(
                f"{request.where}: {request.copy} is not a copy of the release "
                f"({released_where(released)} lists {shown})",
                hint=f"list the copies the release holds in {qualify(MODELS_KEY)} (`tdk package` "
                "prints them), or point releaseUrl at the release that has it",
            )
        if request.decoupled_from and request.decoupled != found.decoupled:
            raise ConfigError(
                f"{request.where}: {request.decoupled_from} is {str(request.decoupled).lower()} "
                f"but the release packaged {request.copy} "
                + ("without an mme/ archive (decoupled)" if found.decoupled else "as an archive"),
                hint=f"remove decoupled from {request.decoupled_from.rsplit('.', 1)[0]} (the "
                "manifest says it), or re-package the release",
            )
        fitted.append(
            replace(request, decoupled=found.decoupled, decoupled_from=found.where,
                    engine=found.engine)
        )  # fmt: skip
    return fitted


def released_where(released: list[CopyRequest]) -> str:
    """The manifest the copies were read from (for messages)."""
    if not released:
        return "an empty manifest"
    return released[0].decoupled_from or "the manifest"
