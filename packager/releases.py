"""The releases a store holds: every prefix with a ``manifest.json`` (a complete release, since
the manifest is written last), with when it was made and what it serves. ``tdk releases``
lists them so an operator can pick the one to roll back to; releases are never rewritten."""

from __future__ import annotations

from dataclasses import dataclass

from packager.manifest import MANIFEST_NAME
from packager.stores import open_store
from packager.stores.capped import read_manifest
from tdk.errors import TdkError


@dataclass(frozen=True)
class Release:
    """One complete release under a store: its URL, when it was made, its models and size;
    ``problem`` says why its manifest could not be read (then the rest is empty)."""

    url: str
    created_at: str
    models: int
    total_bytes: int
    problem: str = ""

    def as_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "url": self.url,
            "created_at": self.created_at,
            "models": self.models,
            "total_bytes": self.total_bytes,
        }
        return {**found, "problem": self.problem} if self.problem else found


def list_releases(url: str, endpoint_url: str | None = None) -> list[Release]:
    """Every release under ``url`` (``url`` itself when it is one), oldest first; one whose
    manifest cannot be read is listed last with its problem, so one bad manifest does not hide
    the releases to roll back to."""
    store = open_store(url, endpoint_url)
    base = url.rstrip("/")
    found = []
    for key in store.list_keys(""):
        if key != MANIFEST_NAME and not key.endswith("/" + MANIFEST_NAME):
            continue
        prefix = key.removesuffix(MANIFEST_NAME).rstrip("/")
        release_url = f"{base}/{prefix}" if prefix else base
        try:
            manifest = read_manifest(open_store(release_url, endpoint_url))
        except TdkError as exc:
            found.append(Release(release_url, "", 0, 0, exc.message))
            continue
        size = sum(m.size for m in manifest.models)
        found.append(Release(release_url, manifest.created_at, len(manifest.models), size))
    return sorted(found, key=lambda r: (bool(r.problem), r.created_at, r.url))
