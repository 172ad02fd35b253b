"""The releases a store holds: every prefix with a ``manifest.json`` (a complete release, since
the manifest is written last), with when it was made and what it serves. ``tdk releases``
lists them so an operator can pick the one to roll back to; releases are never rewritten."""

from __future__ import annotations

from dataclasses import dataclass

from packager.manifest import MANIFEST_NAME
from packager.stores import open_store
from packager.stores.capped import read_manifest


@dataclass(frozen=True)
class Release:
    """One complete release under a store: its URL, when it was made, its models and size."""

    url: str
    created_at: str
    models: int
    total_bytes: int

    def as_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "created_at": self.created_at,
            "models": self.models,
            "total_bytes": self.total_bytes,
        }


def list_releases(url: str, endpoint_url: str | None = None) -> list[Release]:
    """Every release under ``url`` (``url`` itself when it is one), oldest first."""
    store = open_store(url, endpoint_url)
    base = url.rstrip("/")
    found = []
    for key in store.list_keys(""):
        if key != MANIFEST_NAME and not key.endswith("/" + MANIFEST_NAME):
            continue
        prefix = key.removesuffix(MANIFEST_NAME).rstrip("/")
        release_url = f"{base}/{prefix}" if prefix else base
        manifest = read_manifest(open_store(release_url, endpoint_url))
        size = sum(m.size for m in manifest.models)
        found.append(Release(release_url, manifest.created_at, len(manifest.models), size))
    return sorted(found, key=lambda r: (r.created_at, r.url))
