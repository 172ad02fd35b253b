"""Fixtures of the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def users_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's own project folder as the working directory, with an endpoint state of its own,
    for a test that serves through the Triton runtime (skipped without `make setup`)."""
    from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    return tmp_path
