"""Release stores are registered by URL scheme (``packager.stores.KINDS``, each kind declared
in its own module): ``open_store`` and the CLI's help ask the table, never a list of clouds."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager import stores
from packager.stores.base import StoreKind
from packager.stores.file import FileStore
from tdk.errors import StoreError


def test_a_registered_kind_opens_its_urls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    opened: list[tuple[str, str | None]] = []

    def moon(url: str, endpoint_url: str | None) -> FileStore:
        opened.append((url, endpoint_url))
        return FileStore(f"file://{tmp_path}", tmp_path)

    kinds = {**stores.KINDS, "moon": StoreKind("moon", "moon://crater/prefix", moon)}
    monkeypatch.setattr(stores, "KINDS", kinds)
    assert isinstance(stores.open_store("moon://crater/r1", "http://e"), FileStore)
    assert opened == [("moon://crater/r1", "http://e")]
    assert "moon://" in stores.scheme_list()


def test_an_unknown_scheme_names_every_registered_form() -> None:
    with pytest.raises(StoreError) as raised:
        stores.open_store("mars://x/y")
    assert raised.value.hint is not None
    for kind in stores.KINDS.values():
        assert kind.form in raised.value.hint
    assert stores.scheme_list().startswith("file://, ")
